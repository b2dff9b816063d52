import { AreaFlow, issued, othersThan, pieceCount } from './area-flow';
import type { Hierarchy } from './hierarchy';
import type { NodeArea } from './node-area';
import { Tag } from './tags';

/**
 * bcast through the nodes' shared areas, in pieces of the area's slot size, the levels
 * overlapping. On each node one writer (the root on its node, the leader elsewhere) copies each
 * piece into the next slot of the area once and tells the node; every other rank of the node
 * copies it out. Between nodes the leaders broadcast piece by piece, all pieces issued at once, so
 * piece i + 1 crosses while piece i spreads on the nodes. The root node's leader, when the root
 * is another rank, forwards each piece as soon as it has copied it out.
 *
 * Slots are reused in a ring: a reader tells the writer it is done with piece i when piece
 * i + slots will need its slot, and with the last piece (so the call leaves the area free).
 */
export async function bcastThroughArea(
  h: Hierarchy,
  area: NodeArea,
  buf: Uint8Array,
  root: number,
): Promise<void> {
  const { loc, local, leaders } = h;
  const { chunk, slots } = area.shape;
  const n = buf.length;
  const pieces = pieceCount(n, chunk);
  const piece = (i: number) => buf.subarray(i * chunk, Math.min(n, (i + 1) * chunk));
  const rootNode = loc.nodeOf(root);
  const onRootNode = loc.node === rootNode;
  const writer = onRootNode ? loc.localRanks.indexOf(root) : 0;
  const flow = new AreaFlow(local);
  const crossings: Promise<unknown>[] = [];

  if (local.rank === writer) {
    const readers = othersThan(local.size, writer);
    // The root leading its node sends every piece off-node at once; another node's leader
    // receives them in order, each as soon as it crossed.
    if (leaders)
      for (let i = 0; i < pieces; i++) crossings.push(issued(leaders.bcast(piece(i), rootNode)));
    for (let i = 0; i < pieces; i++) {
      if (!onRootNode) await crossings[i];
      if (readers.length === 0) continue;
      if (i >= slots) await flow.hear(readers, Tag.AREA_DONE);
      const p = piece(i);
      area.slot(i % slots, p.length).set(p);
      flow.tell(readers, Tag.AREA_READY);
    }
    if (readers.length > 0) await flow.hear(readers, Tag.AREA_DONE);
  } else {
    const mustTell = (i: number) => i + slots < pieces || i === pieces - 1;
    for (let i = 0; i < pieces; i++) {
      await flow.hear([writer], Tag.AREA_READY);
      const p = piece(i);
      p.set(area.slot(i % slots, p.length));
      if (mustTell(i)) flow.tell([writer], Tag.AREA_DONE);
      // Only the root node's leader, when the root is another rank, gets here with leaders.
      if (leaders) crossings.push(issued(leaders.bcast(p, rootNode)));
    }
  }
  await Promise.all(crossings);
  await flow.drained();
}
