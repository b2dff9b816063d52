import type { Hierarchy } from './hierarchy';

/**
 * MagPIe's broadcast (Fig. 6.3/6.4): the data crosses the network once per node. When the root
 * leads its node it sends to the other leaders and to its own node at the same time (two
 * sub-communicators, so the two broadcasts overlap); otherwise its node gets the data first by a
 * local broadcast from the root (the leader has it without an extra hop), then the leaders
 * broadcast. Every other node's leader then broadcasts locally. Each level runs the
 * sub-communicator's own module (lam_basic, over sm on-node when the sm rpi is selected).
 */
export async function bcastHierarchical(
  h: Hierarchy,
  buf: Uint8Array,
  root: number,
): Promise<void> {
  const { loc, local, leaders } = h;
  const rootNode = loc.nodeOf(root);
  const onRootNode = loc.node === rootNode;
  const hasLocal = local.size > 1;
  if (onRootNode && leaders && loc.localRanks[0] === root) {
    // The root leads its node: both levels at once.
    await Promise.all([leaders.bcast(buf, rootNode), hasLocal ? local.bcast(buf, 0) : null]);
    return;
  }
  if (onRootNode && hasLocal) await local.bcast(buf, loc.localRanks.indexOf(root));
  if (leaders) await leaders.bcast(buf, rootNode);
  if (!onRootNode && hasLocal) await local.bcast(buf, 0);
}
