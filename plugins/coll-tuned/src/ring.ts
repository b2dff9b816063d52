import type { CollComm, NumericArray, ReduceOp } from '@ssi/mpi';
import { slice } from './buffers';
import { checkLength, swapOperands } from './exchange';
import { splitUnit } from './split';
import { Tag } from './tags';

/** The ring's blocks: block j of `acc`, cut in whole units of the operator (`split.ts`). */
export function ringBlocks(
  acc: NumericArray,
  n: number,
  op: ReduceOp,
  segmentBytes = 0,
): RingBlocks {
  const unit = splitUnit(op);
  const units = acc.length / unit;
  const base = Math.floor(units / n);
  const extra = units % n;
  // Block j: the first `extra` blocks get one unit more.
  const start = (j: number) => (j * base + Math.min(j, extra)) * unit;
  return {
    block: (a: NumericArray, j: number) => slice(a, start(j), start(j + 1)),
    largest: (base + (extra > 0 ? 1 : 0)) * unit,
    segmentBytes,
    unit,
  };
}

/** Blocks of a vector a ring walks: block j of `a`, and the size of the largest. */
export interface RingBlocks {
  block: (a: NumericArray, j: number) => NumericArray;
  largest: number;
  /** Each step's blocks travel in pieces of about this many bytes (0: whole). */
  segmentBytes?: number;
  /** The smallest run of elements a piece may end at (the operator's unit, `split.ts`). */
  unit?: number;
}

/** Element ranges [lo, hi) cutting `length` elements into pieces of about `bytes`. */
function piecesOf(length: number, perElement: number, bytes: number, unit: number): number[][] {
  const step = Math.max(unit, Math.floor(bytes / perElement / unit) * unit);
  if (bytes <= 0 || length <= step) return [[0, length]];
  const pieces: number[][] = [];
  for (let lo = 0; lo < length; lo += step) pieces.push([lo, Math.min(length, lo + step)]);
  return pieces;
}

/**
 * One step of the ring's reduce-scatter: `out` to the right, the same block's partner from the
 * left into `into`, combined into `mine` (from `src`). Cut in pieces, each piece is combined as
 * soon as it is there while the rest still travels: the combining overlaps the transfer. Both
 * sides cut a block of one length at the same places, so piece i meets receive i (messages of one
 * source and tag match in order).
 */
async function ringStep(
  comm: CollComm,
  out: NumericArray,
  into: NumericArray,
  src: NumericArray,
  mine: NumericArray,
  op: ReduceOp,
  tag: number,
  blocks: RingBlocks,
): Promise<void> {
  const c = comm.coll;
  const right = (c.rank + 1) % c.size;
  const left = (c.rank - 1 + c.size) % c.size;
  const size = into.BYTES_PER_ELEMENT;
  const unit = blocks.unit ?? 1;
  const seg = blocks.segmentBytes ?? 0;
  const incoming = piecesOf(into.length, size, seg, unit);
  if (incoming.length === 1 && piecesOf(out.length, size, seg, unit).length === 1) {
    await swapOperands(comm, out, right, into, left, tag);
    op.apply(into, src, mine);
    return;
  }
  const arrivals = incoming.map(([lo, hi]) => c.irecv(slice(into, lo!, hi!), left, tag));
  const sends = piecesOf(out.length, size, seg, unit).map(([lo, hi]) =>
    c.isend(slice(out, lo!, hi!), right, tag),
  );
  for (const [i, [lo, hi]] of incoming.entries()) {
    const piece = slice(into, lo!, hi!);
    const status = (await arrivals[i]!.wait()) as { byteLength: number };
    checkLength(comm, status.byteLength, piece, left);
    op.apply(piece, slice(src, lo!, hi!), slice(mine, lo!, hi!));
  }
  await Promise.all(sends.map((s) => s.wait()));
}

/** Where the ring's reduce-scatter reads this rank's operand and writes its partial blocks. */
export interface RingBuffers {
  /** This rank's operand (may be `acc`: in place). */
  src: NumericArray;
  /** Where combined blocks go; a block is read from here once it was combined. */
  acc: NumericArray;
  /** Receives the neighbour's block: at least the largest block's length. */
  theirs: NumericArray;
}

/**
 * The ring's reduce-scatter over any blocks: n - 1 steps, in step s rank r passes its partial
 * block r + ends - 1 - s to the right and combines block r + ends - 2 - s from the left. Rank r
 * ends with block r + ends complete in `acc` (allreduce: ends 1; reduce-scatter: ends 0, its own
 * block). Every block but r + ends - 1 is combined once, from `src` into `acc`, and only then
 * sent on: no copy of the operand into `acc` first. Operands are combined in ring order:
 * commutative operators only.
 */
export async function ringReduceScatterOf(
  comm: CollComm,
  { src, acc, theirs }: RingBuffers,
  op: ReduceOp,
  blocks: RingBlocks,
  ends: number,
  tag: number,
): Promise<void> {
  const { block } = blocks;
  const c = comm.coll;
  const n = c.size;
  const r = c.rank;
  const at = (j: number) => (((r + ends + j) % n) + n) % n;
  for (let s = 0; s < n - 1; s++) {
    // Step 0 sends a block nobody combined yet; later steps the one combined the step before.
    const out = block(s === 0 ? src : acc, at(-1 - s));
    const j = at(-2 - s);
    const into = slice(theirs, 0, block(acc, j).length);
    await ringStep(comm, out, into, block(src, j), block(acc, j), op, tag, blocks);
  }
}

/**
 * The ring's reduce-scatter on the allreduce's equal blocks: rank r ends with block r + 1
 * complete in `acc`.
 */
export function ringReduceScatter(
  comm: CollComm,
  buffers: RingBuffers,
  op: ReduceOp,
  blocks: RingBlocks,
): Promise<void> {
  return ringReduceScatterOf(comm, buffers, op, blocks, 1, Tag.ALLREDUCE_SCATTER);
}
