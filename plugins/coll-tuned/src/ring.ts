import type { CollComm, NumericArray, ReduceOp } from '@ssi/mpi';
import { similarArray } from '@ssi/mpi';
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

/**
 * The ring's reduce-scatter over any blocks: n - 1 steps, in step s rank r passes its partial
 * block r + ends - 1 - s to the right and combines block r + ends - 2 - s from the left. Rank r
 * ends with block r + ends complete (allreduce: ends 1; reduce-scatter: ends 0, its own block).
 * Operands are combined in ring order: commutative operators only.
 */
export async function ringReduceScatterOf(
  comm: CollComm,
  acc: NumericArray,
  op: ReduceOp,
  { block, largest }: RingBlocks,
  ends: number,
  tag: number,
): Promise<void> {
  const c = comm.coll;
  const n = c.size;
  const r = c.rank;
  const at = (j: number) => (((r + ends + j) % n) + n) % n;
  const scratch = similarArray(acc, largest);
  for (let s = 0; s < n - 1; s++) {
    const mine = block(acc, at(-2 - s));
    const theirs = slice(scratch, 0, mine.length);
    await swapOperands(comm, block(acc, at(-1 - s)), (r + 1) % n, theirs, (r - 1 + n) % n, tag);
    op.apply(theirs, mine, mine);
  }
}

/**
 * The ring's reduce-scatter on the allreduce's equal blocks: rank r ends with block r + 1
 * complete.
 */
export function ringReduceScatter(comm: CollComm, acc: NumericArray, op: ReduceOp): Promise<void> {
  return ringReduceScatterOf(
    comm,
    acc,
    op,
    ringBlocks(acc, comm.coll.size, op),
    1,
    Tag.ALLREDUCE_SCATTER,
  );
}
