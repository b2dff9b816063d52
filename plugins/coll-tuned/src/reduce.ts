import type { CollComm, NumericArray, ReduceOp } from '@ssi/mpi';
import { recvOperand } from './exchange';
import { ringBlocks, ringReduceScatter } from './ring';
import { FRESH, type Scratch } from './scratch';
import { Tag } from './tags';
import { realOf, virtualOf } from './virtual';

/**
 * Folds the extra ranks into their even neighbours (see `virtual.ts`): the odd rank of a pair
 * sends `acc`, the even one computes acc = acc op theirs (its own operand first: rank order).
 * Returns this process's virtual rank, -1 when it handed its operand over.
 */
export async function foldExtras(
  comm: CollComm,
  acc: NumericArray,
  scratch: () => NumericArray,
  op: ReduceOp,
  tag: number,
): Promise<number> {
  const c = comm.coll;
  const { rem, v } = virtualOf(c.rank, c.size);
  if (c.rank >= 2 * rem) return v;
  if (v < 0) {
    await c.send(acc, c.rank - 1, tag);
    return v;
  }
  const theirs = scratch();
  await recvOperand(comm, theirs, c.rank + 1, tag);
  op.apply(acc, theirs, acc);
  return v;
}

/**
 * Where a reduce accumulates: the root in its receive buffer (its operand copied in unless in
 * place), everybody else in a copy of its operand (in scratch); `spare` receives operands.
 */
function accumulator(
  send: NumericArray | null,
  recv: NumericArray | null,
  isRoot: boolean,
  scratch: Scratch,
): { acc: NumericArray; spare: () => NumericArray } {
  if (isRoot) {
    if (send !== null) recv!.set(send as never);
    return { acc: recv!, spare: () => scratch.like(recv!) };
  }
  const [acc, spare] = scratch.arrays(send!, send!.length, send!.length) as [
    NumericArray,
    NumericArray,
  ];
  acc.set(send! as never);
  return { acc, spare: () => spare };
}

/**
 * Binomial reduce along the recursive-doubling structure: extra ranks fold in, then virtual rank
 * v receives from v + 2^k while bit k of v is clear and sends to v - 2^k at its lowest set bit.
 * Operands combine in exactly the association of `allreduceRecursiveDoubling` (contiguous,
 * aligned groups, lower group first), so reduce and allreduce give the same bits and
 * non-commutative operators stay in rank order. The result lands at rank 0 and goes to the
 * root from there.
 */
export async function reduceBinomial(
  comm: CollComm,
  send: NumericArray | null,
  recv: NumericArray | null,
  op: ReduceOp,
  root: number,
  memory: Scratch = FRESH,
): Promise<void> {
  const c = comm.coll;
  const isRoot = c.rank === root;
  if (c.size === 1) {
    if (isRoot && send !== null) recv!.set(send as never);
    return;
  }
  const { acc, spare } = accumulator(send, recv, isRoot, memory);
  let kept: NumericArray | undefined;
  const scratch = () => {
    kept ??= spare();
    return kept;
  };
  const { p, rem } = virtualOf(c.rank, c.size);
  const v = await foldExtras(comm, acc, scratch, op, Tag.REDUCE);
  if (v >= 0) {
    for (let mask = 1; mask < p; mask *= 2) {
      if (v & mask) {
        await c.send(acc, realOf(v - mask, rem), Tag.REDUCE);
        break;
      }
      if (v + mask < p) {
        const theirs = scratch();
        await recvOperand(comm, theirs, realOf(v + mask, rem), Tag.REDUCE);
        op.apply(acc, theirs, acc);
      }
    }
  }
  if (root === 0) return;
  if (c.rank === 0) await c.send(acc, root, Tag.REDUCE);
  else if (isRoot) await recvOperand(comm, recv!, 0, Tag.REDUCE);
}

/**
 * Ring reduce: the ring allreduce's reduce-scatter, then every rank sends its complete block to
 * the root. Used exactly where allreduce uses the ring (same blocks, same association), so that
 * reduce and allreduce give the same bits for the same operands. The root accumulates in its
 * receive buffer, the others in scratch; the operand is read where it is.
 */
export async function reduceRing(
  comm: CollComm,
  send: NumericArray | null,
  recv: NumericArray | null,
  op: ReduceOp,
  root: number,
  scratch: Scratch = FRESH,
): Promise<void> {
  const c = comm.coll;
  const isRoot = c.rank === root;
  if (c.size === 1) {
    if (isRoot && send !== null) recv!.set(send as never);
    return;
  }
  const src = send ?? recv!;
  const blocks = ringBlocks(src, c.size, op);
  const [acc, theirs] = (
    isRoot
      ? [recv!, scratch.like(src, blocks.largest)]
      : scratch.arrays(src, src.length, blocks.largest)
  ) as [NumericArray, NumericArray];
  await ringReduceScatter(comm, { src, acc, theirs }, op, blocks);
  const { block } = blocks;
  const mine = (c.rank + 1) % c.size;
  if (!isRoot) {
    await c.send(block(acc, mine), root, Tag.REDUCE);
    return;
  }
  const arrivals = [];
  for (let r = 0; r < c.size; r++) {
    if (r !== root) arrivals.push(recvOperand(comm, block(acc, (r + 1) % c.size), r, Tag.REDUCE));
  }
  await Promise.all(arrivals);
}
