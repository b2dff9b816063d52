import type { Hierarchy } from './hierarchy';

/**
 * MagPIe's broadcast (Fig. 6.3/6.4): the data crosses the network once per node. The root's node
 * gets it first by a local broadcast from the root (so the root's leader has it without an extra
 * hop), then the leaders broadcast from the root's node, then every other node's leader
 * broadcasts locally. Each level runs the sub-communicator's own module (lam_basic, over sm
 * on-node when the sm rpi is selected).
 */
export async function bcastHierarchical(
  h: Hierarchy,
  buf: Uint8Array,
  root: number,
): Promise<void> {
  const { loc, local, leaders } = h;
  const rootNode = loc.nodeOf(root);
  const onRootNode = loc.node === rootNode;
  if (onRootNode && local.size > 1) await local.bcast(buf, loc.localRanks.indexOf(root));
  if (leaders) await leaders.bcast(buf, rootNode);
  if (!onRootNode && local.size > 1) await local.bcast(buf, 0);
}
