import { ANY_TAG, type Status } from '@ssi/mpi';
import { AreaFlow, issued } from './area-flow';
import {
  type Call,
  copyOut,
  dataOf,
  forward,
  mineAt,
  type Piece,
  pieceTag,
  placeOf,
  readHead,
  STRIPED,
  slotFree,
  slotOf,
  writeHead,
} from './bcast-call';
import { type BcastRoute, bcastRoute } from './bcast-route';
import { passSmall, smallArrived } from './bcast-small';
import {
  goesStriped,
  lengthIn,
  stripedElsewhere,
  stripedRoot,
  stripedRootReader,
} from './bcast-striped';
import type { Hierarchy } from './hierarchy';
import { type NodeArea, RING_HEAD } from './node-area';
import { Tag } from './tags';

/** Per served communicator: the buffer a reader receives a bcast's first message into. */
const stagings = new WeakMap<Hierarchy, Uint8Array>();

function stagingOf(h: Hierarchy, bytes: number): Uint8Array {
  let s = stagings.get(h);
  if (s === undefined || s.length < bytes) {
    s = new Uint8Array(bytes);
    stagings.set(h, s);
  }
  return s;
}

/**
 * bcast through the nodes' shared areas. A root buffer below `inlineMax` travels whole, one
 * message per level (`bcast-small.ts`); every rank learns which from its first message (its tag),
 * so the root's length chooses for all. Larger ones in pieces of the area's slot size. On
 * each node one writer (the root on its node, the leader elsewhere) has each piece in the next
 * slot of the area's ring and tells the node (AREA_READY); every other rank of the node copies it
 * out. Between nodes each piece is a message down the leaders' binomial tree, tagged as the last
 * one or not; another node's leader receives it straight into its ring slot (any tag: within a
 * call, its parent sends it nothing else), so it forwards, signals and copies out with no copy
 * into the area, and nothing but the pieces crosses the network. The root sends from its own
 * buffer while it copies into its node's ring. Each slot's head says the piece's length and
 * whether it is the last, so every rank moves exactly the root's pieces, whatever length it
 * passed: a rank whose buffer is shorter takes part to the end (the caller then reports the
 * truncation). Returns the root's length.
 *
 * Nobody waits for the readers at the end: each rank counts the pieces it is done with in the
 * area, and a writer (of this call or a later one, whichever rank it is) waits for those counts
 * only before it reuses a ring slot. So a root leaves as soon as its data is out, as with
 * lam_basic's tree, and consecutive broadcasts overlap.
 */
export async function bcastThroughArea(
  h: Hierarchy,
  area: NodeArea,
  buf: Uint8Array,
  root: number,
  inlineMax: number,
  /** A root buffer from this many bytes (one piece at most) goes striped (0: never). */
  stripeMin: number,
): Promise<number> {
  const route = bcastRoute(h, root);
  const { writer } = route;
  const me = h.local.rank;
  // At least a striped call's header (the root's length).
  const staging = stagingOf(h, Math.max(8, inlineMax));
  if (me !== writer) {
    // The first message says which: the whole (small) buffer, or how the pieces come.
    const first = await h.local.coll.recv(staging, writer, ANY_TAG);
    if (first.tag === Tag.BCAST_SMALL) return smallArrived(h, route, first, staging, buf, false);
    const c = callOf(h, area, buf, route, inlineMax, stripeMin, staging);
    return finished(c, await readPieces(c, me, writer, first));
  }
  if (route.onRootNode) {
    if (buf.length < inlineMax) {
      await passSmall(h, route, buf, true);
      return buf.length;
    }
    const c = callOf(h, area, buf, route, inlineMax, stripeMin, staging);
    return finished(c, await writePieces(c, me));
  }
  // Another node's leader: the first message (a small call's, or piece 0) straight into the
  // call's first ring slot, once its readers are done with that slot's previous use.
  const free = area.piecesSent - area.shape.ring + 1;
  if (!area.isDone(route.readers, free)) await area.waitDone(route.readers, free);
  const target = area.ringSlot(area.piecesSent, area.shape.chunk).subarray(RING_HEAD);
  const first = await h.leaders!.coll.recv(target, route.parent, ANY_TAG);
  if (first.tag === Tag.BCAST_SMALL) {
    // Out of the ring before anyone hears of it: a small call counts no slot, so the next
    // call's writer takes this one as soon as the node's readers have the message.
    staging.set(target.subarray(0, first.byteLength));
    return smallArrived(h, route, first, staging, buf, true);
  }
  const c = callOf(h, area, buf, route, inlineMax, stripeMin, staging);
  return finished(c, await receivePieces(c, route.parent, first));
}

/** One call of more than a small message through the areas, as this rank sees it. */
function callOf(
  h: Hierarchy,
  area: NodeArea,
  buf: Uint8Array,
  route: BcastRoute,
  inlineMax: number,
  stripeMin: number,
  staging: Uint8Array,
): Call {
  const { local, leaders, flat } = h;
  return {
    area,
    first: area.piecesSent,
    buf,
    flow: new AreaFlow(local),
    readers: route.readers,
    local,
    leaders,
    children: route.children,
    inlineMax,
    staging,
    stripeMin,
    lanes: { flat, from: route.laneFrom, to: route.laneTo },
  };
}

/** The end of a call that moved `moved.pieces` pieces: counts them, waits for its signals. */
async function finished(c: Call, moved: { length: number; pieces: number }): Promise<number> {
  c.area.piecesSent = c.first + moved.pieces;
  await c.flow.drained();
  return moved.length;
}

/** The root: sends each piece down the leaders' tree from its buffer, and puts it into the ring. */
async function writePieces(c: Call, me: number) {
  const { chunk } = c.area.shape;
  const length = c.buf.length;
  if (goesStriped(c, length)) return stripedRoot(c, me);
  const pieces = Math.max(1, Math.ceil(length / chunk));
  const forwarded: Promise<unknown>[] = [];
  const piece = (i: number) => c.buf.subarray(i * chunk, Math.min(length, (i + 1) * chunk));
  const sendAll = () => {
    for (let i = 0; i < pieces; i++)
      forwarded.push(issued(forward(c, piece(i), pieceTag(i === pieces - 1))));
  };
  // Readers that copy straight out of this buffer are told first (measured: a send of 4 MiB
  // writes into its socket for 0.35-0.4 ms before it returns, and they waited for that). Else
  // the sends go first, while piece 0 is copied into the slot.
  const tellFirst = c.readers.length > 0 && c.area.cross !== null;
  if (!tellFirst) sendAll();
  if (c.readers.length > 0) {
    for (let i = 0; i < pieces; i++) {
      await slotFree(c, i);
      const slot = slotOf(c, i);
      const data = piece(i);
      // With single copy the readers take the piece out of this buffer; else it goes into the slot.
      const at = placeOf(c, data);
      writeHead(slot, { bytes: data.length, last: i === pieces - 1, ...at });
      if (at.pid === 0) slot.set(data, RING_HEAD);
      c.flow.tell(c.readers, Tag.AREA_READY);
      if (i === 0 && tellFirst) sendAll();
    }
    // The caller may change its buffer once this returns: the readers must be done with it.
    if (c.area.cross) await c.area.waitDone(c.readers, c.first + pieces);
    c.area.markDone(me, c.first + pieces);
  }
  await Promise.all(forwarded);
  return { length, pieces };
}

/**
 * Another node's leader: receives each piece from its parent leader straight into the next ring
 * slot (posted as soon as the previous piece said more follow and the slot is free), tells its
 * node, forwards it to its children and copies it into its own buffer. It never waits for its
 * readers: they copy out of the slot, which no writer reuses before they are done, so the leader
 * can take the next call's data while its node still copies this one (measured on 2 + 2 over
 * sm: 3.0 against 3.3-3.9 ms per 4 MiB call when the leader received into its own buffer and
 * waited for its reader to copy out of it).
 */
async function receivePieces(c: Call, parent: number, first: Status) {
  const ring = c.area.shape.ring;
  const forwarded: Promise<unknown>[] = [];
  const into = (i: number) => slotOf(c, i).subarray(RING_HEAD);
  const post = async (i: number) => {
    if (i >= ring) await forwarded[i - ring];
    await slotFree(c, i);
    const target = into(i);
    // Wrapped: an async function returning the promise itself would wait for the arrival.
    return { target, arrival: issued(c.leaders!.coll.irecv(target, parent, ANY_TAG).wait()) };
  };
  let length = 0;
  // Piece 0 arrived (`first`) in slot 0 (`bcastThroughArea`).
  let next: { target: Uint8Array; arrival: Promise<unknown> } = {
    target: into(0),
    arrival: Promise.resolve(first),
  };
  for (let i = 0; ; i++) {
    const status = (await next.arrival) as { byteLength: number; tag: number };
    const data = next.target.subarray(0, status.byteLength);
    if (status.tag === Tag.BCAST_STRIPE) return stripedElsewhere(c, 0, lengthIn(next.target));
    const last = status.tag === Tag.BCAST_LAST;
    if (!last) next = await post(i + 1);
    writeHead(slotOf(c, i), { bytes: data.length, last, pid: 0, address: 0 });
    c.flow.tell(c.readers, Tag.AREA_READY);
    forwarded[i] = issued(forward(c, data, pieceTag(last)));
    copyOut(c, data, length);
    length += data.length;
    if (last) {
      await Promise.all(forwarded);
      if (c.readers.length > 0) c.area.markDone(0, c.first + i + 1);
      return { length, pieces: i + 1 };
    }
  }
}

/**
 * A piece in the writer's memory, copied out of it by cross-memory attach: into this rank's
 * buffer, or, when that is too short and the piece must be forwarded whole, into a new one (an
 * erroneous program) whose start then goes into the buffer. Returns the piece's bytes.
 */
function fetch(c: Call, p: Piece, at: number): Uint8Array {
  const mine = mineAt(c, at, p.bytes);
  const whole = mine.length === p.bytes || c.children.length === 0 ? mine : new Uint8Array(p.bytes);
  c.area.cross!.readFrom(p.pid, p.address, whole);
  if (whole !== mine) mine.set(whole.subarray(0, mine.length));
  return whole;
}

/**
 * Every other rank of a node: copies each piece out of the ring when the writer says it is
 * there. The root's node leader, when the root is another rank, also forwards each piece down the
 * leaders' tree from the slot, before it says it is done with it.
 */
async function readPieces(c: Call, me: number, writer: number, first: Status) {
  if (first.tag === Tag.BCAST_STRIPE) return stripedElsewhere(c, me, lengthIn(c.staging));
  let length = 0;
  for (let i = 0; ; i++) {
    if (i > 0) await c.flow.hear([writer], Tag.AREA_READY);
    const slot = slotOf(c, i);
    const p = readHead(slot);
    if (p.last === STRIPED) return stripedRootReader(c, me, p);
    const data = p.pid === 0 ? dataOf(slot, p) : fetch(c, p, length);
    const sent = forward(c, data, pieceTag(p.last));
    if (p.pid === 0) copyOut(c, data, length);
    length += p.bytes;
    await sent;
    c.area.markDone(me, c.first + i + 1);
    if (p.last) return { length, pieces: i + 1 };
  }
}
