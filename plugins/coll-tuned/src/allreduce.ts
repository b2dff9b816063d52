import type { CollComm, NumericArray, ReduceOp } from '@ssi/mpi';
import { bcastBinomial } from './bcast';
import { slice } from './buffers';
import { checkLength, recvOperand, swapOperands } from './exchange';
import { foldExtras, reduceBinomial } from './reduce';
import { ringBlocks, ringReduceScatter } from './ring';
import { FRESH, type Scratch } from './scratch';
import { splitUnit } from './split';
import { Tag } from './tags';
import { isPowerOfTwo, realOf, virtualOf } from './virtual';

/** An allreduce whose operand is already in `acc` (the receive buffer). */
type InPlace = (comm: CollComm, acc: NumericArray, op: ReduceOp, scratch: Scratch) => Promise<void>;

/** An allreduce as tuned runs it: the action's arguments and the communicator's scratch. */
export type TunedAllreduce = (
  comm: CollComm,
  send: NumericArray | null,
  recv: NumericArray,
  op: ReduceOp,
  scratch?: Scratch,
) => Promise<void>;

/** Rounds `count` elements down to whole units of `op` (`split.ts`). */
const inUnits = (count: number, unit: number) => count - (count % unit);

/** Copies the operand into `recv` (unless in place) and runs `body` there. */
export function onReceiveBuffer(body: InPlace): TunedAllreduce {
  return async (comm, send, recv, op, scratch = FRESH) => {
    if (send !== null) recv.set(send as never);
    if (comm.coll.size > 1) await body(comm, recv, op, scratch);
  };
}

/** Combines `theirs` into `acc` with the lower rank's operand first. */
function combine(op: ReduceOp, acc: NumericArray, theirs: NumericArray, theyAreLower: boolean) {
  combineInto(op, acc, acc, theirs, theyAreLower);
}

/**
 * Runs `body` on the virtual ranks (`virtual.ts`): extra ranks fold in first and get the result
 * from their even neighbour at the end.
 */
async function withExtrasFolded(
  comm: CollComm,
  acc: NumericArray,
  op: ReduceOp,
  memory: Scratch,
  body: (v: number, p: number, rem: number, scratch: NumericArray) => Promise<void>,
): Promise<void> {
  const c = comm.coll;
  const scratch = memory.like(acc);
  const { p, rem } = virtualOf(c.rank, c.size);
  const v = await foldExtras(comm, acc, () => scratch, op, Tag.ALLREDUCE);
  if (v < 0) {
    await recvOperand(comm, acc, c.rank - 1, Tag.ALLREDUCE);
    return;
  }
  await body(v, p, rem, scratch);
  if (c.rank < 2 * rem) await c.send(acc, c.rank + 1, Tag.ALLREDUCE);
}

/**
 * Recursive doubling: virtual rank v swaps its whole vector with v ^ 2^k in round k and combines,
 * lower rank first. log2(p) latencies, the best for small vectors. Rank order is kept.
 *
 * On a power of two (nothing to fold) the rounds run straight from here: the small allreduce is
 * as long as its message latencies plus the promise hops of every async layer it passes, and the
 * folding layers cost 2-3 of them for nothing (2 pinned ranks, 8 B: 4.0 µs above the bare
 * exchange on the collective context before, 2.3-3.0 after).
 */
export const allreduceRecursiveDoubling: TunedAllreduce = (
  comm,
  send,
  recv,
  op,
  memory = FRESH,
) => {
  if (send !== null) recv.set(send as never);
  const c = comm.coll;
  if (c.size === 1) return DONE;
  if (isPowerOfTwo(c.size))
    return doublingRounds(comm, recv, op, memory.like(recv), c.rank, c.size, 0);
  return withExtrasFolded(comm, recv, op, memory, (v, p, rem, scratch) =>
    doublingRounds(comm, recv, op, scratch, v, p, rem),
  );
};

const DONE: Promise<void> = Promise.resolve();

/** The rounds of recursive doubling for virtual rank `v` of `p` (`rem` folded pairs). */
async function doublingRounds(
  comm: CollComm,
  acc: NumericArray,
  op: ReduceOp,
  scratch: NumericArray,
  v: number,
  p: number,
  rem: number,
): Promise<void> {
  const c = comm.coll;
  for (let mask = 1; mask < p; mask *= 2) {
    const partner = v ^ mask;
    const peer = realOf(partner, rem);
    // swapOperands written out: one async layer less per round
    const got = await c.sendrecv(acc, peer, Tag.ALLREDUCE, scratch, peer, Tag.ALLREDUCE);
    checkLength(comm, got.byteLength, scratch, peer);
    combine(op, acc, scratch, partner < v);
  }
}

interface HalvingStep {
  peer: number;
  keep: [number, number];
  give: [number, number];
}

/** Combines `mine` and `theirs` into `out` with the lower rank's operand first. */
function combineInto(
  op: ReduceOp,
  out: NumericArray,
  mine: NumericArray,
  theirs: NumericArray,
  theyAreLower: boolean,
) {
  if (theyAreLower) op.apply(theirs, mine, out);
  else op.apply(mine, theirs, out);
}

/**
 * Rabenseifner's two phases on virtual rank v of p: a reduce-scatter by recursive halving
 * (round k: swap half of the current range with v ^ 2^k, keep and combine the other half), then
 * an allgather retracing the rounds backwards. Round 0 reads this rank's operand from `src`
 * (which may be `acc`) and writes the combined half into `acc`; every later round reads and
 * writes `acc`, and the allgather fills the rest of it: nothing is copied into `acc` first.
 */
async function halvingDoubling(
  comm: CollComm,
  src: NumericArray,
  acc: NumericArray,
  op: ReduceOp,
  scratch: NumericArray,
  { v, p, rem }: { v: number; p: number; rem: number },
): Promise<void> {
  const steps: HalvingStep[] = [];
  let lo = 0;
  let hi = acc.length;
  let from = src;
  for (let mask = 1; mask < p; mask *= 2) {
    const partner = v ^ mask;
    const mid = lo + inUnits(Math.floor((hi - lo) / 2), splitUnit(op));
    const lower = v < partner;
    const step: HalvingStep = {
      peer: realOf(partner, rem),
      keep: lower ? [lo, mid] : [mid, hi],
      give: lower ? [mid, hi] : [lo, mid],
    };
    const theirs = slice(scratch, ...step.keep);
    await swapOperands(
      comm,
      slice(from, ...step.give),
      step.peer,
      theirs,
      step.peer,
      Tag.ALLREDUCE_SCATTER,
    );
    combineInto(op, slice(acc, ...step.keep), slice(from, ...step.keep), theirs, !lower);
    from = acc;
    steps.push(step);
    [lo, hi] = step.keep;
  }
  for (const step of steps.reverse()) {
    await swapOperands(
      comm,
      slice(acc, ...step.keep),
      step.peer,
      slice(acc, ...step.give),
      step.peer,
      Tag.ALLREDUCE_GATHER,
    );
  }
}

/**
 * Rabenseifner's allreduce for large vectors (`halvingDoubling`): each process moves about 2
 * times the vector instead of log2(p) times. Round k combines aligned groups of 2^k ranks, lower
 * group first: the same association as recursive doubling, rank order kept. Built-in operators
 * only: the vector is cut (`split.ts`). On a power of two the operand is read where it is; other
 * sizes fold their extra ranks in first (`virtual.ts`), on a copy of the operand in `recv`.
 */
export const allreduceRabenseifner: TunedAllreduce = async (
  comm,
  send,
  recv,
  op,
  memory = FRESH,
) => {
  const c = comm.coll;
  const virtual = virtualOf(c.rank, c.size);
  if (send === null || virtual.rem > 0 || c.size === 1) {
    await onReceiveBuffer((_, acc) =>
      withExtrasFolded(comm, acc, op, memory, (v, p, rem, scratch) =>
        halvingDoubling(comm, acc, acc, op, scratch, { v, p, rem }),
      ),
    )(comm, send, recv, op, memory);
    return;
  }
  await halvingDoubling(comm, send, recv, op, memory.like(recv), virtual);
};

/**
 * Ring allreduce for large vectors on any n: the ring reduce-scatter, then n - 1 steps of
 * allgather; every process sends about 2 (n-1)/n of the vector, never more than one block at a
 * time. Block j is combined in ring order starting after rank j, so this is only used for
 * built-in operators (commutative, and the vector may be cut: `split.ts`). Each block is
 * combined by one process and copied to the others: every rank gets the same bits. The operand
 * is read where it is: every block of `recv` is either combined into from it or received. With
 * `segmentBytes`, each reduce-scatter step travels in pieces combined as they arrive.
 */
export async function allreduceRing(
  comm: CollComm,
  send: NumericArray | null,
  recv: NumericArray,
  op: ReduceOp,
  scratch: Scratch = FRESH,
  segmentBytes = 0,
): Promise<void> {
  const c = comm.coll;
  const n = c.size;
  const r = c.rank;
  if (n === 1) {
    if (send !== null) recv.set(send as never);
    return;
  }
  const acc = recv;
  const blocks = ringBlocks(acc, n, op, segmentBytes);
  const theirs = scratch.like(acc, blocks.largest);
  await ringReduceScatter(comm, { src: send ?? acc, acc, theirs }, op, blocks);
  const { block } = blocks;
  for (let s = 0; s < n - 1; s++) {
    await swapOperands(
      comm,
      block(acc, (r + 1 - s + n) % n),
      (r + 1) % n,
      block(acc, (r - s + n) % n),
      (r - 1 + n) % n,
      Tag.ALLREDUCE_GATHER,
    );
  }
}

/**
 * Binomial reduce to rank 0, then binomial bcast: 2 (n - 1) messages of the whole vector in
 * 2 ceil(log2 n) latencies, against recursive doubling's n log2 n messages in half the latencies:
 * the better trade when processes outnumber cores. The reduce is `reduceBinomial`, so operands
 * combine in recursive doubling's association (rank order, the same bits as `reduce`).
 */
export const allreduceReduceBcast: TunedAllreduce = async (
  comm,
  send,
  recv,
  op,
  scratch = FRESH,
) => {
  const root = comm.coll.rank === 0;
  // In place the operand is in `recv`; only rank 0 accumulates there.
  if (root) await reduceBinomial(comm, send, recv, op, 0, scratch);
  else await reduceBinomial(comm, send ?? recv, null, op, 0, scratch);
  await bcastBinomial(comm, new Uint8Array(recv.buffer, recv.byteOffset, recv.byteLength), 0);
};
