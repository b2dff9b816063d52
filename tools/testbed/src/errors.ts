import { SsiError, type SsiErrorCode } from '@ssi/core';

/** Why a testbed operation failed; stable, for programs. */
export type TestbedFailure =
  | 'UNAVAILABLE' // this machine cannot run a testbed (no sshd, not root, …)
  | 'BAD_OPTIONS' // the caller asked for something impossible
  | 'ADDRESS_IN_USE' // the requested 127.0.0.N:port is taken
  | 'START_FAILED' // an sshd did not come up or did not accept the login in time
  | 'SSH_FAILED' // an ssh command could not be run or timed out
  | 'NOT_A_TESTBED'; // a directory is not (or no longer) a testbed directory

const CORE_CODE: Record<TestbedFailure, SsiErrorCode> = {
  UNAVAILABLE: 'NONE_AVAILABLE',
  BAD_OPTIONS: 'BAD_ARGS',
  ADDRESS_IN_USE: 'NONE_AVAILABLE',
  START_FAILED: 'NONE_AVAILABLE',
  SSH_FAILED: 'NONE_AVAILABLE',
  NOT_A_TESTBED: 'NOT_FOUND',
};

/** Every failure of the testbed: an SsiError whose `failure` says what kind. */
export class TestbedError extends SsiError {
  constructor(
    readonly failure: TestbedFailure,
    message: string,
  ) {
    super(CORE_CODE[failure], message);
  }
}
