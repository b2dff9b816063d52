import { readFileSync } from 'node:fs';
import type { CollComm } from '@ssi/mpi';
import { BOR, MAX } from '@ssi/mpi';

/** Words of the CPU sets a node's ranks combine (32 CPUs each): up to 1024 CPUs. */
const WORDS = 32;

function ownStatus(): string | null {
  try {
    return readFileSync('/proc/self/status', 'utf8');
  } catch {
    return null;
  }
}

/**
 * The CPUs this process may run on, as a bit set, from `Cpus_allowed_list` of Linux's
 * `/proc/<pid>/status` (`status`: that file's text); null where it says nothing readable.
 */
export function allowedCpus(status: string | null = ownStatus()): Int32Array | null {
  const list = status?.match(/^Cpus_allowed_list:\s*(\S+)\s*$/m)?.[1];
  if (list === undefined) return null;
  const set = new Int32Array(WORDS);
  for (const range of list.split(',')) {
    const m = range.match(/^(\d+)(?:-(\d+))?$/);
    if (!m) return null;
    const last = Math.min(Number(m[2] ?? m[1]), WORDS * 32 - 1);
    for (let cpu = Number(m[1]); cpu <= last; cpu++) set[cpu >> 5]! |= 1 << (cpu & 31);
  }
  return set;
}

/** How many CPUs a set of `allowedCpus` holds. */
export function cpuCount(set: Int32Array): number {
  let n = 0;
  for (let w of set) {
    for (; w !== 0; w &= w - 1) n++;
  }
  return n;
}

/**
 * Whether some node of the communicator has fewer CPUs than ranks: the CPUs its ranks may run
 * on (each rank's allowed set, OR-ed over the node's communicator `local`) are fewer than the
 * ranks, as when mpirun binds an oversubscribed job in blocks of consecutive ranks per CPU. Then
 * a node's ranks take turns on a CPU, every message costs a switch between them, and the small
 * collectives take the levels (fewer messages) rather than recursive doubling over the whole
 * communicator (fewer hops). A rank that cannot tell (no `/proc`) counts as having every CPU.
 * Collective over `flat` (the whole communicator), so every rank decides alike.
 */
export async function crowdedNodes(local: CollComm, flat: CollComm): Promise<boolean> {
  const union = allowedCpus() ?? new Int32Array(WORDS).fill(-1);
  await local.allreduce(union, BOR, union);
  const crowded = new Int32Array([cpuCount(union) < local.size ? 1 : 0]);
  await flat.allreduce(crowded, MAX, crowded);
  return crowded[0] === 1;
}
