import type { CollComm, NumericArray, ReduceOp } from '@ssi/mpi';
import { similarArray } from '@ssi/mpi';
import type { Reduce } from './allreduce';
import { total } from './buffers';
import { peersOf, waitAll } from './p2p';
import { Tag } from './tags';

/**
 * Reduce-scatter as LAM does it: reduce the whole vector to rank 0, which then sends rank r its
 * block of counts[r] elements (blocks follow each other in rank order). In place
 * (`send === null`) the whole vector is in `recv` and the block is left at its start.
 */
export function makeReduceScatter(reduce: Reduce) {
  return async function reduceScatter(
    comm: CollComm,
    send: NumericArray | null,
    recv: NumericArray,
    counts: readonly number[],
    op: ReduceOp,
  ): Promise<void> {
    const c = comm.coll;
    const length = total(counts);
    const input = send ?? recv.subarray(0, length);
    if (c.rank !== 0) {
      await reduce(comm, input, null, op, 0);
      await c.recv(recv.subarray(0, counts[c.rank]!), 0, Tag.REDUCE_SCATTER);
      return;
    }
    const whole = similarArray(input, length);
    await reduce(comm, input, whole, op, 0);
    const offsets = blockOffsets(counts);
    const blockOf = (r: number) => whole.subarray(offsets[r]!, offsets[r]! + counts[r]!);
    const sends = peersOf(0, c.size).map((r) => c.isend(blockOf(r), r, Tag.REDUCE_SCATTER));
    recv.set(blockOf(0) as never);
    await waitAll(sends);
  };
}

/** Where each rank's block starts in the concatenated vector. */
function blockOffsets(counts: readonly number[]): number[] {
  const offsets: number[] = [];
  let at = 0;
  for (const count of counts) {
    offsets.push(at);
    at += count;
  }
  return offsets;
}
