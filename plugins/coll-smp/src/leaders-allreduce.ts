import type { CollComm, NumericArray, ReduceOp } from '@ssi/mpi';
import { ErrorClass, IN_PLACE, MpiError } from '@ssi/mpi';
import { bytesOf, sameKind } from './buffers';
import { Tag } from './tags';

/**
 * allreduce of `buf` in place among the node leaders, for commutative operators only. On a
 * power-of-two number of leaders by recursive doubling: each step exchanges with the partner at
 * distance 2^s and combines, both partners with the lower rank's operand first, so every leader
 * ends with the same bits. On two nodes that is one exchange, where lam_basic's allreduce (reduce
 * to rank 0, then bcast) crosses the network twice one after the other. Other sizes take the
 * leaders' own allreduce. `scratch` (same type and length as `buf`) takes the partner's operand;
 * without it a new array does.
 */
export async function leadersAllreduce(
  leaders: CollComm,
  buf: NumericArray,
  op: ReduceOp,
  scratch?: NumericArray,
): Promise<void> {
  if (!isPowerOfTwo(leaders.size)) {
    await leaders.allreduce(IN_PLACE, op, buf);
    return;
  }
  const theirs = scratch ?? sameKind(buf);
  for (let d = 1; d < leaders.size; d *= 2) {
    const partner = leaders.rank ^ d;
    const got = await leaders.coll.sendrecv(
      bytesOf(buf),
      partner,
      Tag.LEADERS_EXCHANGE,
      bytesOf(theirs),
      partner,
      Tag.LEADERS_EXCHANGE,
    );
    if (got.byteLength !== buf.byteLength) {
      // A shorter operand fits the receive: without this check this rank would go on as if the
      // operands matched (an erroneous program must get an error on every rank).
      throw new MpiError(
        ErrorClass.ERR_TRUNCATE,
        `smp: allreduce: rank ${partner} of ${leaders.name} gave ${got.byteLength} bytes where ${buf.byteLength} were expected (operands of different lengths)`,
      );
    }
    if (partner < leaders.rank) op.apply(theirs, buf, buf);
    else op.apply(buf, theirs, buf);
  }
}

export function isPowerOfTwo(n: number): boolean {
  return n > 0 && (n & (n - 1)) === 0;
}
