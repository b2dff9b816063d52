import type { CollComm, NumericArray, ReduceOp } from '@ssi/mpi';
import { copyOfArray, similarArray } from '@ssi/mpi';
import { recvOperand, swapOperands } from './exchange';
import { Tag } from './tags';

/**
 * One round of the recursive-doubling prefix: send `partial` (the reduction of this rank's window
 * of the last `mask` ranks or fewer) to rank + mask and receive the window below from
 * rank - mask, whichever exist. Returns the received window, or null on ranks below `mask`.
 */
async function prefixRound(
  comm: CollComm,
  partial: NumericArray,
  scratch: NumericArray,
  mask: number,
  tag: number,
): Promise<NumericArray | null> {
  const c = comm.coll;
  const up = c.rank + mask;
  const down = c.rank - mask;
  if (down < 0) {
    if (up < c.size) await c.send(partial, up, tag);
    return null;
  }
  if (up < c.size) await swapOperands(comm, partial, up, scratch, down, tag);
  else await recvOperand(comm, scratch, down, tag);
  return scratch;
}

/**
 * Recursive-doubling inclusive scan: in round k rank r sends its window x(r-2^k+1) op ... op xr
 * to r + 2^k and puts the window below it, from r - 2^k, on its left. ceil(log2 n) latencies
 * instead of the chain's n - 1; operands stay in rank order (any operator, vectors whole).
 */
export async function scanRecursiveDoubling(
  comm: CollComm,
  send: NumericArray | null,
  recv: NumericArray,
  op: ReduceOp,
): Promise<void> {
  if (send !== null) recv.set(send as never);
  const scratch = similarArray(recv);
  for (let mask = 1; mask < comm.coll.size; mask *= 2) {
    const below = await prefixRound(comm, recv, scratch, mask, Tag.SCAN);
    if (below) op.apply(below, recv, recv);
  }
}

/**
 * Recursive-doubling exclusive scan: the same windows travel as in `scanRecursiveDoubling`, and
 * each rank also keeps the reduction of what it received (everything below it, in rank order),
 * which is its result. Rank 0 receives nothing and leaves `recv` untouched.
 */
export async function exscanRecursiveDoubling(
  comm: CollComm,
  send: NumericArray | null,
  recv: NumericArray,
  op: ReduceOp,
): Promise<void> {
  const partial = copyOfArray(send ?? recv);
  const scratch = similarArray(partial);
  let started = false;
  for (let mask = 1; mask < comm.coll.size; mask *= 2) {
    const below = await prefixRound(comm, partial, scratch, mask, Tag.EXSCAN);
    if (!below) continue;
    if (started) op.apply(below, recv, recv);
    else recv.set(below as never);
    started = true;
    op.apply(below, partial, partial);
  }
}
