import type { CollComm, NumericArray } from '@ssi/mpi';
import { ErrorClass, MpiError } from '@ssi/mpi';

/**
 * A reduction's operands must have one length on every rank. A longer message is a truncation
 * error below us; a shorter one would pass silently and leave stale elements in the result, so
 * it is an error here, on the rank that received it (the others then fail or time out, as with
 * lam_basic, instead of some ranks returning a wrong "result").
 */
export function checkLength(comm: CollComm, got: number, into: NumericArray, source: number): void {
  if (got !== into.byteLength) {
    throw new MpiError(
      ErrorClass.ERR_TRUNCATE,
      `${comm.name}: a reduction operand from rank ${source} has ${got} bytes, this rank's has ` +
        `${into.byteLength}: every rank must pass operands of the same length`,
    );
  }
}

/** Receives a reduction operand of exactly `into`'s length. */
export async function recvOperand(
  comm: CollComm,
  into: NumericArray,
  source: number,
  tag: number,
): Promise<void> {
  const status = await comm.coll.recv(into, source, tag);
  checkLength(comm, status.byteLength, into, source);
}

/** Sends `data` to `dest` and receives exactly `into`'s length from `source`. */
export async function swapOperands(
  comm: CollComm,
  data: NumericArray,
  dest: number,
  into: NumericArray,
  source: number,
  tag: number,
): Promise<void> {
  const status = await comm.coll.sendrecv(data, dest, tag, into, source, tag);
  checkLength(comm, status.byteLength, into, source);
}
