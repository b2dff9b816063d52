import type { CollComm } from '@ssi/mpi';
import { AreaFlow, issued, othersThan, pieceCount } from './area-flow';
import { binomialTree } from './binomial';
import type { Hierarchy } from './hierarchy';
import type { NodeArea } from './node-area';
import { Tag } from './tags';

/** One bcast through the areas, as every rank of it sees it. */
interface Call {
  area: NodeArea;
  /** The root's length: every rank moves this many bytes, in `pieces` pieces. */
  length: number;
  pieces: number;
  /** The ring index of piece 0 of this call (rings count pieces across calls). */
  first: number;
  /** This rank's buffer (it may be shorter or longer than `length` in an erroneous program). */
  buf: Uint8Array;
  flow: AreaFlow;
  /** The node's ranks that copy the pieces out of the area (all but the writer). */
  readers: number[];
  /** The leaders' communicator, and this leader's children in the leaders' tree, largest first. */
  leaders: CollComm | null;
  children: number[];
}

const bounds = (c: Call, i: number) => {
  const chunk = c.area.shape.chunk;
  return [i * chunk, Math.min(c.length, (i + 1) * chunk)] as const;
};

/** Piece `i` in the area's ring. */
const slotOf = (c: Call, i: number) => {
  const [from, to] = bounds(c, i);
  return c.area.ringSlot(c.first + i, to - from);
};

/** The part of piece `i` that fits this rank's buffer (empty past its end). */
const mineOf = (c: Call, i: number) => {
  const [from, to] = bounds(c, i);
  return c.buf.subarray(Math.min(c.buf.length, from), Math.min(c.buf.length, to));
};

/** Sends `piece` to this leader's children in the leaders' tree; resolves when all are out. */
function forward(c: Call, piece: Uint8Array): Promise<unknown> {
  return Promise.all(
    c.children.map((r) => c.leaders!.coll.isend(piece, r, Tag.BCAST_PIECE).wait()),
  );
}

/**
 * bcast through the nodes' shared areas once every rank knows the root's `length`
 * (`bcast-header.ts`), in pieces of the area's slot size. On each node one writer (the root on
 * its node, the leader elsewhere) puts each piece into the next slot of the area's ring and tells
 * the node (AREA_READY); every other rank of the node copies it out. Between nodes the pieces go
 * down the leaders' binomial tree as messages of their own, and a receiving leader takes each
 * straight into its node's ring slot: its readers (and the leader itself) copy out while the next
 * piece is still crossing, and no copy into the area is left on that node.
 *
 * Nobody waits for the readers at the end: each rank counts the pieces it is done with in the
 * area, and a writer (of this call or a later one, whichever rank it is) waits for those counts
 * only before it reuses a ring slot. So a root leaves as soon as its data is out, as with
 * lam_basic's tree, and consecutive broadcasts overlap. Every rank moves `length` bytes whatever
 * its own buffer holds; what does not fit is not copied (the caller reports the truncation).
 */
export async function bcastThroughArea(
  h: Hierarchy,
  area: NodeArea,
  buf: Uint8Array,
  root: number,
  length: number,
): Promise<void> {
  const { loc, local, leaders } = h;
  const rootNode = loc.nodeOf(root);
  const onRootNode = loc.node === rootNode;
  const writer = onRootNode ? loc.localRanks.indexOf(root) : 0;
  const pieces = pieceCount(length, area.shape.chunk);
  const c: Call = {
    area,
    length,
    pieces,
    first: area.piecesSent,
    buf,
    flow: new AreaFlow(local),
    readers: othersThan(local.size, writer),
    leaders,
    children: leaders ? binomialTree(leaders.rank, rootNode, leaders.size).children.reverse() : [],
  };
  area.piecesSent += pieces;
  if (local.rank !== writer) await copyOut(c, local.rank, writer);
  else if (onRootNode) await writeFromRoot(c, local.rank);
  else await receiveIntoArea(c, binomialTree(leaders!.rank, rootNode, leaders!.size).parent);
  await c.flow.drained();
}

/** The root: sends every piece down the leaders' tree at once, and puts each into the ring. */
async function writeFromRoot(c: Call, me: number): Promise<void> {
  const sent: Promise<unknown>[] = [];
  for (let i = 0; i < c.pieces; i++) sent.push(issued(forward(c, c.buf.subarray(...bounds(c, i)))));
  if (c.readers.length > 0) {
    for (let i = 0; i < c.pieces; i++) {
      await c.area.waitDone(c.readers, c.first + i - c.area.shape.ring + 1);
      slotOf(c, i).set(c.buf.subarray(...bounds(c, i)));
      c.flow.tell(c.readers, Tag.AREA_READY);
    }
    c.area.markDone(me, c.first + c.pieces);
  }
  await Promise.all(sent);
}

/**
 * Another node's leader: receives each piece from its parent leader straight into the ring slot
 * (posted one piece ahead, as soon as the slot is free), forwards it to its children, tells its
 * node and copies it into its own buffer. A node of one rank has no ring: the pieces go into the
 * buffer itself (or, when it is too short, into a scratch buffer of the root's length).
 */
async function receiveIntoArea(c: Call, parent: number): Promise<void> {
  const { area, readers, leaders } = c;
  const ring = area.shape.ring;
  const shared = readers.length > 0;
  const direct = c.buf.length >= c.length ? c.buf : new Uint8Array(c.length);
  const into = (i: number) => (shared ? slotOf(c, i) : direct.subarray(...bounds(c, i)));
  const forwarded: Promise<unknown>[] = [];
  const arrivals: Promise<unknown>[] = [];
  const post = async (j: number) => {
    if (shared) {
      // The slot's previous piece: this leader's own sends from it, then every reader's copy.
      if (j >= ring) await forwarded[j - ring];
      await area.waitDone(readers, c.first + j - ring + 1);
    }
    arrivals[j] = issued(leaders!.coll.irecv(into(j), parent, Tag.BCAST_PIECE).wait());
  };
  await post(0);
  for (let i = 0; i < c.pieces; i++) {
    if (i + 1 < c.pieces) await post(i + 1);
    await arrivals[i];
    const piece = into(i);
    forwarded[i] = issued(forward(c, piece));
    if (shared) {
      c.flow.tell(readers, Tag.AREA_READY);
      const mine = mineOf(c, i);
      mine.set(piece.subarray(0, mine.length));
    }
  }
  await Promise.all(forwarded);
  if (shared) area.markDone(0, c.first + c.pieces);
  else if (direct !== c.buf) c.buf.set(direct.subarray(0, c.buf.length));
}

/**
 * Every other rank of a node: copies each piece out of the ring when the writer says it is
 * there. The root's node leader, when the root is another rank, also forwards each piece down the
 * leaders' tree from the slot, before it says it is done with it.
 */
async function copyOut(c: Call, me: number, writer: number): Promise<void> {
  for (let i = 0; i < c.pieces; i++) {
    await c.flow.hear([writer], Tag.AREA_READY);
    const slot = slotOf(c, i);
    const sent = c.children.length > 0 ? issued(forward(c, slot)) : null;
    const mine = mineOf(c, i);
    mine.set(slot.subarray(0, mine.length));
    await sent;
    c.area.markDone(me, c.first + i + 1);
  }
}
