import type { CollComm } from '@ssi/mpi';

/**
 * Marks the flat duplicate smp builds for lam_basic (see `hierarchy.ts`) in its name, so that
 * smp's `query` declines it: it spans the same nodes as its parent, and serving it with smp would
 * make the fallback hierarchical again.
 */
export const FLAT_MARK = ' [smp flat]';

/**
 * Why smp does not serve `comm`, or null when it does: a hierarchy pays only when the
 * communicator crosses nodes (off-node messages to save) and some node holds two or more of its
 * ranks (on-node work to do). The per-node and leader communicators smp builds decline by these
 * rules on their own (one node; one rank per node).
 */
export function declineReason(comm: CollComm): string | null {
  if (comm.isInter) return 'intercommunicators are not served (lam_basic serves them)';
  if (comm.name.endsWith(FLAT_MARK)) return 'the flat duplicate smp made for lam_basic';
  const { nodes } = comm.locality;
  if (nodes.length < 2)
    return `all ${comm.size} ranks are on one node: no off-node traffic to save`;
  if (nodes.every((ranks) => ranks.length < 2)) {
    return `one rank per node (${nodes.length} nodes): no on-node level to use`;
  }
  return null;
}
