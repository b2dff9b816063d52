import type { Hierarchy } from './hierarchy';

/**
 * The hierarchical broadcast in segments, the levels overlapping: while the leaders pass segment
 * k between nodes, segment k - 1 already spreads on each node. Each sub-communicator still runs
 * its collectives one at a time in call order (so every rank issues them in the same order per
 * communicator); only different sub-communicators overlap. One segment is `bcastHierarchical`.
 */
export async function bcastPipelined(
  h: Hierarchy,
  buf: Uint8Array,
  root: number,
  segmentBytes: number,
): Promise<void> {
  const { loc, local, leaders } = h;
  const rootNode = loc.nodeOf(root);
  const onRootNode = loc.node === rootNode;
  const hasLocal = local.size > 1;
  const localRoot = onRootNode ? loc.localRanks.indexOf(root) : 0;
  const pending: Promise<unknown>[] = [];
  for (let off = 0; off < buf.length || off === 0; off += segmentBytes) {
    const seg = buf.subarray(off, Math.min(off + segmentBytes, buf.length));
    if (onRootNode && leaders && localRoot === 0) {
      // The root leads its node: both levels at once, segment by segment.
      pending.push(leaders.bcast(seg, rootNode));
      if (hasLocal) pending.push(local.bcast(seg, 0));
    } else if (onRootNode) {
      // The segment reaches this node's leader first, then the other nodes.
      const here = hasLocal ? local.bcast(seg, localRoot) : Promise.resolve(seg);
      pending.push(here);
      if (leaders) pending.push(here.then(() => leaders.bcast(seg, rootNode)));
    } else {
      const arrived = leaders ? leaders.bcast(seg, rootNode) : undefined;
      if (arrived) pending.push(arrived);
      if (hasLocal) {
        // `then` callbacks run in segment order, so local calls are issued in segment order.
        pending.push(arrived ? arrived.then(() => local.bcast(seg, 0)) : local.bcast(seg, 0));
      }
    }
    if (buf.length === 0) break;
  }
  await Promise.all(pending);
}
