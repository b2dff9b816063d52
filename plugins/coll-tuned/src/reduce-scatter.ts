import type { CollComm, NumericArray, ReduceOp } from '@ssi/mpi';
import { similarArray } from '@ssi/mpi';
import { allreduceRecursiveDoubling } from './allreduce';
import { slice } from './buffers';
import { recvOperand, swapOperands } from './exchange';
import { foldExtras } from './reduce';
import { type RingBlocks, ringReduceScatterOf } from './ring';
import { FRESH, type Scratch } from './scratch';
import { Tag } from './tags';
import { realOf, virtualOf } from './virtual';

export type ReduceScatter = (
  comm: CollComm,
  send: NumericArray | null,
  recv: NumericArray,
  counts: readonly number[],
  op: ReduceOp,
  scratch?: Scratch,
) => Promise<void>;

/** Where each rank's block starts in the whole vector; offsets[size] is its length. */
function offsetsOf(counts: readonly number[]): number[] {
  const offsets = [0];
  for (const count of counts) offsets.push(offsets[offsets.length - 1]! + count);
  return offsets;
}

/** The operands: `send`, or in place the first sum(counts) elements of `recv`. */
function inputOf(send: NumericArray | null, recv: NumericArray, total: number): NumericArray {
  return send ?? slice(recv, 0, total);
}

/** Puts this rank's finished block at the start of `recv` (it may overlap: copy first). */
function keep(recv: NumericArray, block: NumericArray): void {
  recv.set((block.buffer === recv.buffer ? block.slice() : block) as never);
}

/**
 * Recursive halving (commutative operators, the vector cut only at block boundaries): extra
 * ranks fold into their even neighbours (`virtual.ts`); then, for mask = p/2 down to 1, virtual
 * rank v swaps the half of its current range of ranks it does not own with v ^ mask and combines
 * the half it keeps. After log2(p) rounds v holds its ranks' blocks reduced; a folding even rank
 * hands its odd neighbour its block. Each process sends about the vector once.
 */
export const reduceScatterRecursiveHalving: ReduceScatter = async (
  comm,
  send,
  recv,
  counts,
  op,
  memory = FRESH,
) => {
  const c = comm.coll;
  const offsets = offsetsOf(counts);
  const input = inputOf(send, recv, offsets[c.size]!);
  const [acc, spare] = memory.arrays(input, input.length, input.length) as [
    NumericArray,
    NumericArray,
  ];
  acc.set(input as never);
  const { p, rem } = virtualOf(c.rank, c.size);
  const scratch = () => spare;
  const v = await foldExtras(comm, acc, scratch, op, Tag.REDUCE_SCATTER);
  if (v < 0) {
    await recvOperand(comm, slice(recv, 0, counts[c.rank]!), c.rank - 1, Tag.REDUCE_SCATTER);
    return;
  }
  // Elements of virtual ranks [a, b): the real ranks they stand for are contiguous.
  const start = (w: number) => offsets[w === p ? c.size : realOf(w, rem)]!;
  let base = 0;
  for (let mask = p / 2; mask >= 1; mask /= 2) {
    const lower = (v & mask) === 0;
    const [keepLo, keepHi] = lower ? [base, base + mask] : [base + mask, base + 2 * mask];
    const [giveLo, giveHi] = lower ? [base + mask, base + 2 * mask] : [base, base + mask];
    const mine = slice(acc, start(keepLo), start(keepHi));
    const theirs = slice(scratch(), start(keepLo), start(keepHi));
    const peer = realOf(v ^ mask, rem);
    await swapOperands(
      comm,
      slice(acc, start(giveLo), start(giveHi)),
      peer,
      theirs,
      peer,
      Tag.REDUCE_SCATTER,
    );
    op.apply(mine, theirs, mine);
    base = keepLo;
  }
  const own = (r: number) => slice(acc, offsets[r]!, offsets[r + 1]!);
  if (c.rank < 2 * rem) await c.send(own(c.rank + 1), c.rank + 1, Tag.REDUCE_SCATTER);
  keep(recv, own(c.rank));
};

/**
 * Ring reduce-scatter on the caller's blocks (commutative operators, any n): n - 1 steps of one
 * block each way; rank r ends with its own block. Each process sends (n - 1)/n of the vector,
 * one block at a time: for large vectors on sizes that are not a power of two.
 */
export const reduceScatterRing: ReduceScatter = async (
  comm,
  send,
  recv,
  counts,
  op,
  scratch = FRESH,
) => {
  const offsets = offsetsOf(counts);
  const src = inputOf(send, recv, offsets[comm.coll.size]!);
  const blocks: RingBlocks = {
    block: (a, j) => slice(a, offsets[j]!, offsets[j + 1]!),
    largest: Math.max(0, ...counts),
  };
  // One process: its operand is the result.
  if (comm.coll.size === 1) return keep(recv, blocks.block(src, 0));
  // The partial blocks go to scratch (in place, `recv` is the operand until the end).
  const [acc, theirs] = scratch.arrays(src, src.length, blocks.largest) as [
    NumericArray,
    NumericArray,
  ];
  await ringReduceScatterOf(comm, { src, acc, theirs }, op, blocks, 0, Tag.REDUCE_SCATTER);
  keep(recv, blocks.block(acc, comm.coll.rank));
};

/**
 * Any operator, rank order kept: the recursive-doubling allreduce of the whole vector (vectors
 * travel whole, lower group first), then every rank keeps its block. log2(p) latencies; what
 * non-commutative and user-defined operators get.
 */
export const reduceScatterRecursiveDoubling: ReduceScatter = async (
  comm,
  send,
  recv,
  counts,
  op,
  scratch = FRESH,
) => {
  const offsets = offsetsOf(counts);
  const total = offsets[comm.coll.size]!;
  // Not from `scratch`: the allreduce takes its own scratch from there.
  const whole = send === null ? slice(recv, 0, total) : similarArray(send, total);
  await allreduceRecursiveDoubling(comm, send, whole, op, scratch);
  keep(recv, slice(whole, offsets[comm.coll.rank]!, offsets[comm.coll.rank + 1]!));
};
