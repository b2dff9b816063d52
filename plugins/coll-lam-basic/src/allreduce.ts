import type { CollComm, NumericArray, ReduceOp } from '@ssi/mpi';
import { bytesOf } from '@ssi/mpi';
import type { Bcast } from './allgather';

/** The reduce the module selected for this communicator (linear or binomial). */
export type Reduce = (
  comm: CollComm,
  send: NumericArray | null,
  recv: NumericArray | null,
  op: ReduceOp,
  root: number,
) => Promise<void>;

/**
 * Allreduce as LAM does it: reduce to rank 0, then broadcast the result, both with the
 * algorithms selected for the communicator. In place (`send === null`) the operand is in `recv`.
 */
export function makeAllreduce(reduce: Reduce, bcast: Bcast) {
  return async function allreduce(
    comm: CollComm,
    send: NumericArray | null,
    recv: NumericArray,
    op: ReduceOp,
  ): Promise<void> {
    const atRoot = comm.coll.rank === 0;
    await reduce(comm, atRoot ? send : (send ?? recv), atRoot ? recv : null, op, 0);
    await bcast(comm, bytesOf(recv), 0);
  };
}
