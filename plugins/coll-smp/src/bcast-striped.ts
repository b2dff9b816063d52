import { othersThan } from './area-flow';
import {
  type Call,
  forward,
  HEAD_BYTES,
  mineAt,
  type Piece,
  placeOf,
  readHead,
  STRIPED,
  slotFree,
  slotOf,
  writeHead,
} from './bcast-call';
import { RING_HEAD } from './node-area';
import { Tag } from './tags';

/**
 * A striped bcast (`coll_smp_bcast_stripe_min_bytes`): where every node holds the same number k
 * of the communicator's ranks, the root's buffer (one piece at most) is cut into k stripes and
 * stripe j crosses between nodes from node rank j to node rank j ("lane" j), so that k
 * connections carry it at once instead of one between the leaders; each node then puts its
 * stripes together by cross-memory attach. On the root's node every rank copies the whole buffer
 * straight out of the root's memory, its own stripe first, and sends that stripe on while it
 * copies the rest; on another node rank j receives stripe j into its own buffer, sends it on to
 * the nodes below, says where it is and copies the other stripes out of the other ranks' buffers.
 *
 * Why (measured on 2 + 2 over two loopback node addresses, the layout): a 4 MiB message
 * between the nodes took ~1.8-2.0 ms over the tcp rpi (a Node socket drives about half of what a
 * blocking one does there), most of the call; two 2 MiB messages on two connections at once took
 * ~1.5 ms; and every rank of the receiving node copies 4 MiB once instead of the leader twice
 * (into the ring, out of it).
 *
 * Every rank learns the stripes from the root's length: the root's node from the head of the
 * call's ring slot, the leaders from a header (`BCAST_STRIPE`, the length) down the leaders'
 * tree, the other ranks of a node from the same header from their leader. A rank whose buffer is
 * shorter than the root's receives a stripe that does not fit into memory of its own.
 */

/** Byte `at` and length of stripe `j` of `length` bytes cut in `k` (whole cache lines). */
export function stripeOf(length: number, k: number, j: number): { at: number; bytes: number } {
  const per = Math.ceil(length / k / 64) * 64;
  const at = Math.min(length, j * per);
  return { at, bytes: Math.min(length, at + per) - at };
}

/** Whether a bcast whose root has `length` bytes goes striped (the root decides; all learn it). */
export function goesStriped(c: Call, length: number): boolean {
  return (
    c.stripeMin > 0 &&
    c.area.stripes &&
    length >= c.stripeMin &&
    length <= c.area.shape.chunk &&
    c.local.size * HEAD_BYTES <= c.area.shape.chunk
  );
}

/** The header that tells a leader, or a node's other ranks, the root's length. */
const headerOf = (length: number) => new Uint8Array(new Float64Array([length]).buffer);

/** The root's length in a header received into `at`. */
export const lengthIn = (at: Uint8Array) => new Float64Array(at.buffer, at.byteOffset, 1)[0]!;

/** Sends this rank's stripe to rank j of each node below this one in the leaders' tree. */
function sendStripe(c: Call, data: Uint8Array): Promise<unknown> {
  const { flat, to } = c.lanes;
  return Promise.all(to.map((r) => flat.coll.isend(data, r, Tag.BCAST_STRIPE_DATA).wait()));
}

/** The head of node rank `j`'s stripe, in the call's ring slot (another node's ranks). */
const headAt = (c: Call, j: number) =>
  slotOf(c, 0).subarray(RING_HEAD + j * HEAD_BYTES, RING_HEAD + (j + 1) * HEAD_BYTES);

/**
 * Copies bytes `at` to `at + bytes` of the root's buffer (`p`: in the root's memory) into this
 * rank's buffer, as far as it reaches; `whole`: returns all of them (a rank that forwards them),
 * in memory of its own where the buffer is too short.
 */
function copyFromRoot(c: Call, p: Piece, at: number, bytes: number, whole: boolean): Uint8Array {
  const mine = mineAt(c, at, bytes);
  const into = mine.length === bytes || !whole ? mine : new Uint8Array(bytes);
  if (into.length > 0) c.area.cross!.readFrom(p.pid, p.address + at, into);
  if (into !== mine) mine.set(into.subarray(0, mine.length));
  return into;
}

/** The root, striped: its node copies from its buffer; it sends its own stripe down its lane. */
export async function stripedRoot(c: Call, me: number) {
  const length = c.buf.length;
  await slotFree(c, 0);
  writeHead(slotOf(c, 0), { bytes: length, last: STRIPED, ...placeOf(c, c.buf) });
  c.flow.tell(c.readers, Tag.AREA_READY);
  const { at, bytes } = stripeOf(length, c.local.size, me);
  // A root that leads its node tells the other leaders (else its node's leader does).
  const sent = [
    forward(c, headerOf(length), Tag.BCAST_STRIPE),
    sendStripe(c, c.buf.subarray(at, at + bytes)),
  ];
  // The caller may change its buffer once this returns: the readers must be done with it.
  await c.area.waitDone(c.readers, c.first + 1);
  c.area.markDone(me, c.first + 1);
  await Promise.all(sent);
  return { length, pieces: 1 };
}

/** Another rank of the root's node, striped (`p`: the slot's head): see the file's comment. */
export async function stripedRootReader(c: Call, me: number, p: Piece) {
  const length = p.bytes;
  const { at, bytes } = stripeOf(length, c.local.size, me);
  const down = forward(c, headerOf(length), Tag.BCAST_STRIPE);
  const own = copyFromRoot(c, p, at, bytes, c.lanes.to.length > 0);
  const sent = sendStripe(c, own);
  copyFromRoot(c, p, 0, at, false);
  copyFromRoot(c, p, at + bytes, length - at - bytes, false);
  c.area.markDone(me, c.first + 1);
  await Promise.all([down, sent]);
  return { length, pieces: 1 };
}

/**
 * A rank of another node, striped, once it knows the root's `length` (the leader from its parent
 * leader's header, the others from the leader's): see the file's comment.
 */
export async function stripedElsewhere(c: Call, me: number, length: number) {
  const k = c.local.size;
  const others = othersThan(k, me);
  const header = headerOf(length);
  const told: Promise<unknown>[] = [forward(c, header, Tag.BCAST_STRIPE)];
  if (me === 0)
    for (const r of others) told.push(c.local.coll.isend(header, r, Tag.BCAST_STRIPE).wait());
  const { at, bytes } = stripeOf(length, k, me);
  const mine = mineAt(c, at, bytes);
  const into = mine.length === bytes ? mine : new Uint8Array(bytes);
  await c.lanes.flat.coll.recv(into, c.lanes.from, Tag.BCAST_STRIPE_DATA);
  if (into !== mine) mine.set(into.subarray(0, mine.length));
  const sent = sendStripe(c, into);
  // Every rank writes a head into the slot: all must be done with its previous use.
  await c.area.waitDone(others, c.first - c.area.shape.ring + 1);
  writeHead(headAt(c, me), { bytes, last: STRIPED, ...placeOf(c, into) });
  c.flow.tell(others, Tag.AREA_READY);
  for (const r of others) {
    await c.flow.hear([r], Tag.AREA_READY);
    const p = readHead(headAt(c, r));
    const dst = mineAt(c, stripeOf(length, k, r).at, p.bytes);
    if (dst.length > 0) c.area.cross!.readFrom(p.pid, p.address, dst);
  }
  c.area.markDone(me, c.first + 1);
  // This rank's stripe is read out of its buffer (or memory it made): the others must be done.
  await c.area.waitDone(others, c.first + 1);
  await Promise.all([...told, sent]);
  return { length, pieces: 1 };
}
