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
 * - more ranks than allowed CPUs (oversubscribed): not bound; the ranks share what there is;
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
): BindPlan {
  if (policy === 'none') return { cpus: null, reason: 'not bound (lam_bind_to none)' };
  const allowed = node.allowed.length;
  const where = `${ranks} rank(s) here, CPUs ${formatCpuList(node.allowed)} allowed`;
  if (ranks > allowed) return { cpus: null, reason: `not bound: oversubscribed (${where})` };
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
