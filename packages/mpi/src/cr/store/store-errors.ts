import { SsiError } from '@ssi/core';

/**
 * A checkpoint store that cannot be used as asked: not a writable directory, bad arguments, a
 * series that is not complete. An SsiError, so commands print the message as one line.
 */
export class CheckpointStoreError extends SsiError {
  constructor(message: string) {
    super('BAD_ARGS', message);
  }
}

/**
 * One file of a series is unusable. The message names the file and what is wrong with it, and
 * says that its series cannot be used (restart falls back to an older complete one).
 */
export class CheckpointFileError extends CheckpointStoreError {
  constructor(
    /** the file, as a path the user can open */
    readonly file: string,
    /** what is wrong, without the file name ("checksum mismatch (…)") */
    readonly problem: string,
  ) {
    super(`${file}: ${problem}; this series cannot be used`);
  }
}
