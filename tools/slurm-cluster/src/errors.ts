import { SsiError, type SsiErrorCode } from '@ssi/core';

/** Why a slurm-cluster operation failed; stable, for programs. */
export type SlurmClusterFailure =
  | 'UNAVAILABLE' // this machine cannot run the cluster (no slurm-wlm / munge, not root, …)
  | 'BAD_OPTIONS' // the caller asked for something impossible
  | 'START_FAILED' // a daemon did not come up, or the node did not become idle in time
  | 'COMMAND_FAILED' // a Slurm client command failed or outlived its timeout
  | 'TIMEOUT' // a job did not reach the awaited state in time
  | 'JOB_STATE'; // a job ended in a state other than the awaited one

const CORE_CODE: Record<SlurmClusterFailure, SsiErrorCode> = {
  UNAVAILABLE: 'NONE_AVAILABLE',
  BAD_OPTIONS: 'BAD_ARGS',
  START_FAILED: 'NONE_AVAILABLE',
  COMMAND_FAILED: 'NONE_AVAILABLE',
  TIMEOUT: 'NONE_AVAILABLE',
  JOB_STATE: 'NONE_AVAILABLE',
};

/** Every failure of the fixture: an SsiError whose `failure` says what kind. */
export class SlurmClusterError extends SsiError {
  constructor(
    readonly failure: SlurmClusterFailure,
    message: string,
  ) {
    super(CORE_CODE[failure], message);
  }
}
