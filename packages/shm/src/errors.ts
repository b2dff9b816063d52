import { SsiError, type SsiErrorCode } from '@ssi/core';

/** What went wrong in @ssi/shm; stable, for programs (`err.failure`). */
export type ShmFailure =
  | 'BAD_ARGS' // a size, index, name or option out of range
  | 'NATIVE_UNAVAILABLE' // the addon was not built (node-gyp failed or was skipped)
  | 'EXISTS' // creating a segment whose name is already taken
  | 'NOT_FOUND' // attaching to a segment that does not exist (yet)
  | 'NOT_READY' // the segment exists but its creator never finished initialising it
  | 'BAD_MAGIC' // the name belongs to something that is not an @ssi/shm segment
  | 'BAD_LAYOUT' // another layout version (another @ssi/shm release)
  | 'WRONG_JOB' // the segment belongs to another job
  | 'BAD_SIZE' // the file size disagrees with the header (truncated, foreign)
  | 'SLOT_TAKEN' // another live process already attached with this index
  | 'BROKEN' // a process died holding the pool lock; the segment was marked unusable
  | 'LOCK_OWNER_DEAD' // the pool lock is held by a process that no longer exists
  | 'LOCK_TIMEOUT' // the pool lock stayed held longer than lockTimeoutMs
  | 'PEER_DEAD' // waiting on a peer process that no longer exists
  | 'TIMEOUT' // a wait with a timeout expired
  | 'CLOSED' // using a segment or endpoint after close()
  | 'CROSS_MEMORY' // process_vm_readv failed (not allowed, no such process, not mapped)
  | 'SYSTEM'; // any other operating-system error (message carries errno)

const CORE_CODE: Record<ShmFailure, SsiErrorCode> = {
  BAD_ARGS: 'BAD_ARGS',
  NATIVE_UNAVAILABLE: 'NONE_AVAILABLE',
  EXISTS: 'DUPLICATE',
  NOT_FOUND: 'NOT_FOUND',
  NOT_READY: 'NOT_FOUND',
  BAD_MAGIC: 'INCOMPATIBLE',
  BAD_LAYOUT: 'BAD_VERSION',
  WRONG_JOB: 'DISAGREEMENT',
  BAD_SIZE: 'INCOMPATIBLE',
  SLOT_TAKEN: 'DUPLICATE',
  BROKEN: 'NONE_AVAILABLE',
  LOCK_OWNER_DEAD: 'NONE_AVAILABLE',
  LOCK_TIMEOUT: 'NONE_AVAILABLE',
  PEER_DEAD: 'NONE_AVAILABLE',
  TIMEOUT: 'NONE_AVAILABLE',
  CLOSED: 'BAD_ARGS',
  CROSS_MEMORY: 'NONE_AVAILABLE',
  SYSTEM: 'NONE_AVAILABLE',
};

/**
 * Every failure of @ssi/shm: an SsiError (so `isSsiError` and the core `code` work) whose
 * `failure` says precisely what kind. The message names what was wrong, what was expected and
 * what to do next.
 */
export class ShmError extends SsiError {
  constructor(
    readonly failure: ShmFailure,
    message: string,
  ) {
    super(CORE_CODE[failure], message);
  }
}

export function isShmError(err: unknown, failure?: ShmFailure): err is ShmError {
  return err instanceof ShmError && (failure === undefined || err.failure === failure);
}
