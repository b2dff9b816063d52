import type { CollComm, NumericArray, ReduceOp } from '@ssi/mpi';
import { copyOfArray, similarArray } from '@ssi/mpi';
import { Tag } from './tags';

/**
 * Inclusive scan, LAM's linear chain: rank i receives x0 op ... op x(i-1) from i - 1, appends its
 * own operand (so operands stay in rank order) and passes the result on to i + 1. In place
 * (`send === null`) the operand is in `recv`.
 */
export async function scan(
  comm: CollComm,
  send: NumericArray | null,
  recv: NumericArray,
  op: ReduceOp,
): Promise<void> {
  const c = comm.coll;
  const own = send ?? recv;
  if (c.rank > 0) {
    const prefix = similarArray(own);
    await c.recv(prefix, c.rank - 1, Tag.SCAN);
    op.apply(prefix, own, recv);
  } else if (send !== null) {
    recv.set(send as never);
  }
  if (c.rank < c.size - 1) await c.send(recv, c.rank + 1, Tag.SCAN);
}

/**
 * Exclusive scan along the same chain: rank i > 0 receives x0 op ... op x(i-1) into `recv` and
 * passes that op x(i) on; rank 0 passes x0 on and leaves `recv` untouched.
 */
export async function exscan(
  comm: CollComm,
  send: NumericArray | null,
  recv: NumericArray,
  op: ReduceOp,
): Promise<void> {
  const c = comm.coll;
  const last = c.rank === c.size - 1;
  if (c.rank === 0) {
    if (!last) await c.send(send ?? recv, 1, Tag.EXSCAN);
    return;
  }
  // In place, the operand must survive the prefix arriving in `recv` (the last rank needs none).
  const own = send ?? (last ? null : copyOfArray(recv));
  await c.recv(recv, c.rank - 1, Tag.EXSCAN);
  if (last) return;
  const next = similarArray(recv);
  op.apply(recv, own!, next);
  await c.send(next, c.rank + 1, Tag.EXSCAN);
}
