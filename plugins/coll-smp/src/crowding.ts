import { allowedCpus } from '@ssi/lam';
import type { CollComm } from '@ssi/mpi';
import { BOR, MAX } from '@ssi/mpi';

/** Words of the CPU sets a node's ranks combine (32 CPUs each): up to 1024 CPUs. */
const WORDS = 32;

/**
 * CPUs as a bit set of WORDS words (CPUs past 1023 are not counted), for an allreduce with BOR;
 * null for null (a list that could not be read).
 */
export function cpuSet(cpus: readonly number[] | null): Int32Array | null {
  if (cpus === null) return null;
  const set = new Int32Array(WORDS);
  for (const cpu of cpus) if (cpu < WORDS * 32) set[cpu >> 5]! |= 1 << (cpu & 31);
  return set;
}

/** How many CPUs a `cpuSet` holds. */
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
  const union = cpuSet(allowedCpus('self')) ?? new Int32Array(WORDS).fill(-1);
  await local.allreduce(union, BOR, union);
  const crowded = new Int32Array([cpuCount(union) < local.size ? 1 : 0]);
  await flat.allreduce(crowded, MAX, crowded);
  return crowded[0] === 1;
}
