import type { SsiContext } from '@ssi/core';
import {
  bindPolicy,
  findTaskset,
  formatCpuList,
  type NodeCpus,
  oversubscribedBinding,
  planBinding,
  readNodeCpus,
} from '@ssi/lam';

/**
 * What `mpirun` would bind on this node now (`lam_bind_to`), for laminfo's overview (after the label `Rank binding`): the policy
 * and where it came from, the CPUs this process may use, the cores other processes hold, and how
 * many ranks of a job would get a core of their own.
 */
export function bindingSummary(ctx: SsiContext, node: NodeCpus = readNodeCpus()): string {
  let policy: ReturnType<typeof bindPolicy>;
  try {
    policy = bindPolicy(ctx.params);
  } catch (err) {
    return `${(err as Error).message}`;
  }
  const source = ctx.params.lookup('lam_bind_to').source;
  const held = node.held.length
    ? `CPUs ${formatCpuList(node.held)} held by pinned processes`
    : 'none held';
  const here = `this node: CPUs ${formatCpuList(node.allowed)} allowed in ${node.cores.length} core(s), ${held}`;
  if (policy === 'none') return `none (lam_bind_to, ${source}); ${here}`;
  let fits = 0;
  while (fits < node.allowed.length && planBinding(policy, fits + 1, node).cpus) fits++;
  const tool = findTaskset() ? '' : '; taskset not found: nothing can be bound';
  return `${policy} (lam_bind_to, ${source}); ${here}; a job of up to ${fits} rank(s) here is bound a CPU each, one of more ranks than CPUs ${oversubscribedSummary(ctx)}${tool}`;
}

/** How a job larger than the node's free CPUs is bound (`lam_bind_oversubscribed`). */
function oversubscribedSummary(ctx: SsiContext): string {
  let how: ReturnType<typeof oversubscribedBinding>;
  try {
    how = oversubscribedBinding(ctx.params);
  } catch (err) {
    return `(${(err as Error).message})`;
  }
  const source = ctx.params.lookup('lam_bind_oversubscribed').source;
  const what =
    how > 0 ? `in blocks of consecutive ranks, one per CPU, up to ${how} a CPU` : 'not at all';
  return `${what} (lam_bind_oversubscribed ${how}, ${source})`;
}
