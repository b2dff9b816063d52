import type { CollComm, NumericArray, ReduceOp } from '@ssi/mpi';
import { slice } from './buffers';
import { swapOperands } from './exchange';
import { splitUnit } from './split';
import { Tag } from './tags';

/** The ring's blocks: block j of `acc`, cut in whole units of the operator (`split.ts`). */
export function ringBlocks(acc: NumericArray, n: number, op: ReduceOp) {
  const unit = splitUnit(op);
  const units = acc.length / unit;
  const base = Math.floor(units / n);
  const extra = units % n;
  // Block j: the first `extra` blocks get one unit more.
  const start = (j: number) => (j * base + Math.min(j, extra)) * unit;
  return {
    block: (a: NumericArray, j: number) => slice(a, start(j), start(j + 1)),
    largest: (base + (extra > 0 ? 1 : 0)) * unit,
  };
}

/** Blocks of a vector a ring walks: block j of `a`, and the size of the largest. */
export interface RingBlocks {
  block: (a: NumericArray, j: number) => NumericArray;
  largest: number;
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
  { block }: RingBlocks,
  ends: number,
  tag: number,
): Promise<void> {
  const c = comm.coll;
  const n = c.size;
  const r = c.rank;
  const at = (j: number) => (((r + ends + j) % n) + n) % n;
  for (let s = 0; s < n - 1; s++) {
    // Step 0 sends a block nobody combined yet; later steps the one combined the step before.
    const out = block(s === 0 ? src : acc, at(-1 - s));
    const into = slice(theirs, 0, block(acc, at(-2 - s)).length);
    await swapOperands(comm, out, (r + 1) % n, into, (r - 1 + n) % n, tag);
    op.apply(into, block(src, at(-2 - s)), block(acc, at(-2 - s)));
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
