import type { CollComm } from '@ssi/mpi';
import type { AreaFlow } from './area-flow';
import { type NodeArea, RING_HEAD } from './node-area';
import { Tag } from './tags';

/** One bcast through the areas, as one rank of it sees it. */
export interface Call {
  area: NodeArea;
  /** The ring index of this call's piece 0 (rings count pieces across calls). */
  first: number;
  /** This rank's buffer (shorter or longer than the root's in an erroneous program). */
  buf: Uint8Array;
  flow: AreaFlow;
  /** The node's ranks that copy the pieces out of the area (all but the writer). */
  readers: readonly number[];
  local: CollComm;
  leaders: CollComm | null;
  /** This leader's children in the leaders' tree, the largest subtree first. */
  children: readonly number[];
  /** A root's buffer shorter than this travels whole in one message per level (`BCAST_SMALL`). */
  inlineMax: number;
  /** Where a reader receives its first message from the writer (`inlineMax` bytes, at least 8). */
  staging: Uint8Array;
  /** A root buffer from this many bytes (one piece at most) goes striped (0: never). */
  stripeMin: number;
  /**
   * This rank's lane of a striped call: node rank j on every node (`bcast-striped.ts`), as ranks
   * of the flat duplicate: where its stripe comes from (-1 on the root's node) and goes to.
   */
  lanes: { flat: CollComm; from: number; to: readonly number[] };
}

/**
 * What a slot's head says: a piece's bytes, whether it is the call's last, and where it is: in
 * the slot after the head (`pid` 0), or at `address` in process `pid`'s memory. A striped call
 * (`bcast-striped.ts`) marks `last` STRIPED and `bytes` is the root's whole length.
 */
export interface Piece {
  bytes: number;
  last: boolean | typeof STRIPED;
  pid: number;
  address: number;
}

/** `Piece.last` of a striped call's head. */
export const STRIPED = 2;

/** Bytes of one head (four doubles). */
export const HEAD_BYTES = 32;

const headOf = (at: Uint8Array) => new Float64Array(at.buffer, at.byteOffset, 4);

export function writeHead(at: Uint8Array, p: Piece): void {
  const last = p.last === STRIPED ? STRIPED : p.last ? 1 : 0;
  headOf(at).set([p.bytes, last, p.pid, p.address]);
}

export function readHead(at: Uint8Array): Piece {
  const [bytes, last, pid, address] = headOf(at);
  return {
    bytes: bytes!,
    last: last === STRIPED ? STRIPED : last === 1,
    pid: pid!,
    address: address!,
  };
}

/** Where `data` is, for the node's readers: in this process, when they may copy out of it. */
export function placeOf(c: Call, data: Uint8Array): { pid: number; address: number } {
  return c.area.cross && data.length > 0
    ? { pid: process.pid, address: c.area.cross.addressOf(data) }
    : { pid: 0, address: 0 };
}

/** Ring slot `i` of the call: the head, then room for a whole piece. */
export const slotOf = (c: Call, i: number) => c.area.ringSlot(c.first + i, c.area.shape.chunk);

/** The data of a piece in its slot. */
export const dataOf = (slot: Uint8Array, p: Piece) => slot.subarray(RING_HEAD, RING_HEAD + p.bytes);

/** The part of this rank's buffer that the root's bytes at `at`, `bytes` long, fill. */
export const mineAt = (c: Call, at: number, bytes: number) =>
  c.buf.subarray(Math.min(c.buf.length, at), Math.min(c.buf.length, at + bytes));

/** Copies a piece at byte `at` of the root's buffer into this rank's, as far as it reaches. */
export function copyOut(c: Call, data: Uint8Array, at: number): void {
  const mine = mineAt(c, at, data.length);
  mine.set(data.subarray(0, mine.length));
}

/** The tag of a piece down the leaders' tree. */
export const pieceTag = (last: boolean) => (last ? Tag.BCAST_LAST : Tag.BCAST_PIECE);

/** Sends `data` to this leader's children with `tag`; resolves when all are out. */
export function forward(c: Call, data: Uint8Array, tag: number): Promise<unknown> {
  if (c.children.length === 0) return Promise.resolve();
  return Promise.all(c.children.map((r) => c.leaders!.coll.isend(data, r, tag).wait()));
}

/** Waits until ring slot `i` of the call may be written: every reader is done with its piece. */
export function slotFree(c: Call, i: number): Promise<void> {
  if (c.readers.length === 0) return Promise.resolve();
  return c.area.waitDone(c.readers, c.first + i - c.area.shape.ring + 1);
}
