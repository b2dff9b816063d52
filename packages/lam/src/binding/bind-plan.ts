import { formatCpuList } from './cpu-list';
import type { NodeCpus } from './node-cpus';

/** `lam_bind_to` / `mpirun --bind-to`: bind each rank to a core of its own, or never. */
export type BindPolicy = 'core' | 'none';

export const BIND_POLICIES: readonly BindPolicy[] = ['core', 'none'];

/** Where a job's ranks on one node run. */
export interface BindPlan {
  /** The CPUs of each local rank (index = the rank's slot on the node), or null: not bound. */
  cpus: number[][] | null;
  /** One line for verbose output and laminfo: what was chosen and why. */
  reason: string;
}

/**
 * Places `ranks` ranks of one job on a node, as Open MPI's default binding does on a node that
 * is not oversubscribed (`--bind-to core`): each rank on a core of its own, so the scheduler
 * never stacks two polling ranks on one core while another idles (measured on 2 cores: a
 * 2-rank barrier 11-23 µs pinned against 23-34 unbound). Unlike Open MPI (which binds at np <= 2
 * and to a socket above; on one socket that is no binding at all), it binds at every rank count
 * that fits, and it places ranks only on cores nobody else holds:
 *
 * - more ranks than allowed CPUs (oversubscribed): consecutive ranks share a CPU (`planBlocks`)
 *   when that puts at most `blockUpTo` on each (`lam_bind_oversubscribed`), else not bound: the
 *   ranks share what there is;
 * - enough free cores (no CPU of which another process or another job here is pinned to): one
 *   core each (all its hardware threads), in core order;
 * - else enough free hardware threads: one each, spread over the cores first;
 * - else not bound: binding onto CPUs another job holds would stack both jobs there, while
 *   unbound ranks go wherever the scheduler finds room.
 *
 * `reserved` are CPUs this launcher already gave to other jobs that may not have started yet.
 */
export function planBinding(
  policy: BindPolicy,
  ranks: number,
  node: NodeCpus,
  reserved: readonly number[] = [],
  blockUpTo = 0,
): BindPlan {
  if (policy === 'none') return { cpus: null, reason: 'not bound (lam_bind_to none)' };
  const allowed = node.allowed.length;
  const where = `${ranks} rank(s) here, CPUs ${formatCpuList(node.allowed)} allowed`;
  if (ranks > allowed) {
    if (blockUpTo > 0) return planBlocks(ranks, node, reserved, where, blockUpTo);
    return { cpus: null, reason: `not bound: oversubscribed (${where})` };
  }
  const taken = new Set([...node.held, ...reserved]);
  const freeCores = node.cores.filter((core) => !core.some((cpu) => taken.has(cpu)));
  if (ranks <= freeCores.length) {
    const cpus = freeCores.slice(0, ranks).map((core) => [...core]);
    const each = node.cores.every((c) => c.length === 1) ? 'a CPU' : 'a core';
    return { cpus, reason: `bound to ${each} each (${where}${takenNote(taken)})` };
  }
  const threads = spreadThreads(freeCores);
  if (ranks <= threads.length) {
    const cpus = threads.slice(0, ranks).map((cpu) => [cpu]);
    return { cpus, reason: `bound to a hardware thread each (${where}${takenNote(taken)})` };
  }
  return {
    cpus: null,
    reason: `not bound: ${threads.length} free CPU(s) for ${ranks} rank(s) (${where}${takenNote(taken)})`,
  };
}

/**
 * An oversubscribed job's ranks in blocks of consecutive slots, one block per free CPU (ranks
 * 0-1 on the first CPU and 2-3 on the second for 4 ranks on 2): the partners of the first rounds
 * of recursive doubling and of the subtrees of binomial trees then share a CPU, and waking a
 * process on its own CPU costs a fraction of waking one on another (measured on 2 vCPUs, 4
 * ranks, tcp rpi: a barrier 59-67 µs against 76-85 unbound, allreduce 8 B 66-73 against 82-93).
 * CPUs other pinned processes or jobs of this launcher hold are left out while any is free;
 * with none free, or more than `blockUpTo` ranks a CPU, not bound: a job of many ranks per CPU
 * is CPU-bound at start-up, where bound ranks cannot move to a CPU another program leaves idle
 * (mpirun -np 64 on 2 vCPUs at load 25-50: 3.9-4.3 s in blocks against 3.7-3.8 unbound).
 */
function planBlocks(
  ranks: number,
  node: NodeCpus,
  reserved: readonly number[],
  where: string,
  blockUpTo: number,
): BindPlan {
  const taken = new Set([...node.held, ...reserved]);
  const free = spreadThreads(node.cores.filter((core) => !core.some((cpu) => taken.has(cpu))));
  if (free.length === 0) {
    return {
      cpus: null,
      reason: `not bound: oversubscribed, no free CPU (${where}${takenNote(taken)})`,
    };
  }
  const cpus = Array.from({ length: ranks }, (_, slot) => [
    free[Math.floor((slot * free.length) / ranks)]!,
  ]);
  const per = Math.ceil(ranks / free.length);
  if (per > blockUpTo) {
    return {
      cpus: null,
      reason: `not bound: oversubscribed, ${per} ranks a CPU, more than lam_bind_oversubscribed ${blockUpTo} (${where}${takenNote(taken)})`,
    };
  }
  return {
    cpus,
    reason: `bound in blocks of up to ${per} consecutive ranks per CPU: oversubscribed (${where}${takenNote(taken)}; lam_bind_oversubscribed ${blockUpTo})`,
  };
}

/** The CPUs of `cores`, first threads of every core before second threads. */
function spreadThreads(cores: readonly (readonly number[])[]): number[] {
  const out: number[] = [];
  const depth = Math.max(0, ...cores.map((c) => c.length));
  for (let t = 0; t < depth; t++) for (const core of cores) if (t < core.length) out.push(core[t]!);
  return out;
}

function takenNote(taken: ReadonlySet<number>): string {
  return taken.size === 0
    ? ''
    : `; CPU(s) ${formatCpuList(taken)} held by other pinned processes or jobs`;
}
