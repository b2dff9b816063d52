import { isSsiError } from '@ssi/core';
import type { Communicator } from './comm';
import { ANY_SOURCE, ANY_TAG, PROC_NULL } from './constants';
import type { BufferLike } from './data';
import { ErrorClass, MpiError } from './errors';

/**
 * Argument checks of the communicator calls. Each returns the error to raise (through the
 * communicator's error handler) or null; none throws, so that callers decide how to report.
 */

/**
 * Errors from below as MPI errors: an SSI error (a module that is not installed, a bad parameter)
 * is the user's to fix and keeps its message; anything else is a bug and keeps its stack.
 */
export function toMpiError(error: unknown): MpiError {
  if (error instanceof MpiError) return error;
  if (isSsiError(error)) return new MpiError(ErrorClass.ERR_OTHER, error.message);
  return new MpiError(ErrorClass.ERR_INTERN, `internal error: ${(error as Error)?.stack ?? error}`);
}

export function isBufferLike(v: unknown): v is BufferLike {
  return typeof v === 'object' && v !== null && ArrayBuffer.isView(v);
}

export function freedError(comm: Communicator): MpiError {
  return new MpiError(ErrorClass.ERR_COMM, `${comm.name} has been freed`);
}

export function badRank(comm: Communicator, rank: number, what: string): MpiError | null {
  const n = comm.remote.length;
  if (Number.isInteger(rank) && rank >= 0 && rank < n) return null;
  return new MpiError(
    ErrorClass.ERR_RANK,
    `invalid ${what} rank ${String(rank)}: ${comm.name} has ${comm.isInter ? 'remote ' : ''}ranks 0-${n - 1}` +
      `${what === 'source' ? ', ANY_SOURCE' : ''} and PROC_NULL`,
  );
}

export function checkDest(comm: Communicator, dest: number): MpiError | null {
  if (comm.freed) return freedError(comm);
  return dest === PROC_NULL ? null : badRank(comm, dest, 'destination');
}

export function checkSource(comm: Communicator, source: number): MpiError | null {
  if (comm.freed) return freedError(comm);
  return source === ANY_SOURCE || source === PROC_NULL ? null : badRank(comm, source, 'source');
}

export function checkTag(comm: Communicator, tag: number, receive: boolean): MpiError | null {
  const max = comm.host.maxTag;
  if (Number.isInteger(tag) && tag >= 0 && tag <= max) return null;
  if (receive && tag === ANY_TAG) return null;
  return new MpiError(
    ErrorClass.ERR_TAG,
    `invalid tag ${String(tag)}: tags are integers 0-${max}${receive ? ' or ANY_TAG' : ''}`,
  );
}

export function checkInto(into: unknown): MpiError | null {
  return isBufferLike(into)
    ? null
    : new MpiError(
        ErrorClass.ERR_BUFFER,
        `the receive buffer must be a typed array, Buffer or DataView; to receive any value ` +
          `use comm.recv(source, tag)`,
      );
}

export function intraOnly(comm: Communicator, call: string): MpiError | null {
  return comm.isInter
    ? new MpiError(ErrorClass.ERR_COMM, `${call}: ${comm.name} is an intercommunicator`)
    : null;
}
