import { AreaFlow, issued, othersThan, pieceCount } from './area-flow';
import type { Hierarchy } from './hierarchy';
import type { NodeArea } from './node-area';
import { Tag } from './tags';

/**
 * bcast through the nodes' shared areas, in pieces of the area's slot size, the levels
 * overlapping. On each node one writer (the root on its node, the leader elsewhere) copies each
 * piece into the next slot of the area's ring once and tells the node (AREA_READY); every other
 * rank of the node copies it out. Between nodes the leaders broadcast piece by piece, all pieces
 * issued at once, so piece i + 1 crosses while piece i spreads on the nodes. The root node's
 * leader, when the root is another rank, forwards each piece as soon as it has copied it out.
 *
 * Nobody waits for the readers at the end: each rank counts the pieces it is done with in the
 * area, and a writer (of this call or a later one, whichever rank it is) waits for those counts
 * only before it overwrites a ring slot. So a root leaves as soon as its data is out, as with
 * lam_basic's tree, and consecutive broadcasts overlap.
 */
export async function bcastThroughArea(
  h: Hierarchy,
  area: NodeArea,
  buf: Uint8Array,
  root: number,
): Promise<void> {
  const { loc, local, leaders } = h;
  const { chunk, ring } = area.shape;
  const n = buf.length;
  const pieces = pieceCount(n, chunk);
  const first = area.piecesSent;
  area.piecesSent += pieces;
  const piece = (i: number) => buf.subarray(i * chunk, Math.min(n, (i + 1) * chunk));
  const rootNode = loc.nodeOf(root);
  const onRootNode = loc.node === rootNode;
  const writer = onRootNode ? loc.localRanks.indexOf(root) : 0;
  const flow = new AreaFlow(local);
  const crossings: Promise<unknown>[] = [];
  const me = local.rank;

  if (me === writer) {
    const readers = othersThan(local.size, writer);
    // The root leading its node sends every piece off-node at once; another node's leader
    // receives them in order, each as soon as it crossed.
    if (leaders) {
      for (let i = 0; i < pieces; i++) crossings.push(issued(leaders.bcast(piece(i), rootNode)));
    }
    for (let i = 0; i < pieces; i++) {
      if (!onRootNode) await crossings[i];
      if (readers.length === 0) continue;
      await area.waitDone(readers, first + i - ring + 1);
      const p = piece(i);
      area.ringSlot(first + i, p.length).set(p);
      flow.tell(readers, Tag.AREA_READY);
    }
    if (readers.length > 0) area.markDone(me, first + pieces);
  } else {
    for (let i = 0; i < pieces; i++) {
      await flow.hear([writer], Tag.AREA_READY);
      const p = piece(i);
      p.set(area.ringSlot(first + i, p.length));
      area.markDone(me, first + i + 1);
      // Only the root node's leader, when the root is another rank, gets here with leaders.
      if (leaders) crossings.push(issued(leaders.bcast(p, rootNode)));
    }
  }
  await Promise.all(crossings);
  await flow.drained();
}
