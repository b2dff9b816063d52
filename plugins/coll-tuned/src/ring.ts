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

/**
 * The ring's reduce-scatter: n - 1 steps, in step s rank r passes its partial block r - s to the
 * right and combines block r - s - 1 from the left. Rank r ends with block r + 1 complete.
 */
export async function ringReduceScatter(
  comm: CollComm,
  acc: NumericArray,
  op: ReduceOp,
): Promise<void> {
  const c = comm.coll;
  const n = c.size;
  const r = c.rank;
  const { block, largest } = ringBlocks(acc, n, op);
  const scratch = similarArray(acc, largest);
  for (let s = 0; s < n - 1; s++) {
    const mine = block(acc, (r - s - 1 + n) % n);
    const theirs = slice(scratch, 0, mine.length);
    await swapOperands(
      comm,
      block(acc, (r - s + n) % n),
      (r + 1) % n,
      theirs,
      (r - 1 + n) % n,
      Tag.ALLREDUCE_SCATTER,
    );
    op.apply(theirs, mine, mine);
  }
}
