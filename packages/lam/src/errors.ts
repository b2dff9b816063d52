import { SsiError, type SsiErrorCode } from '@ssi/core';

/** What kind of run-time environment failure happened; stable, for programs and tests. */
export type LamFailure =
  | 'BAD_ARGS' // the caller asked for something malformed
  | 'BAD_SCHEMA' // a boot schema has errors (the message names file and line)
  | 'BAD_CONFIG' // a lamd or hboot was given an unusable configuration
  | 'NO_UNIVERSE' // no lamd runs here (no session directory, or nobody listening)
  | 'ALREADY_RUNNING' // a universe (or a lamd) already runs in this session
  | 'TIMEOUT' // a wait ran past its timeout parameter
  | 'UNREACHABLE' // a host or lamd could not be reached
  | 'AUTH_FAILED' // the universe secret did not match
  | 'PROTOCOL' // a peer sent something that is not our wire protocol
  | 'UNKNOWN_NODE' // a node id that is not in the universe
  | 'LAUNCH_FAILED' // a remote launch (ssh, rsh, ...) failed
  | 'NOT_INSTALLED' // the installation is missing on a node
  | 'LAMD_LOST' // a lamd went away while something waited on it
  | 'REMOTE' // a lamd answered a request with an error
  | 'CLOSED'; // the client or connection was closed

const CORE_CODE: Record<LamFailure, SsiErrorCode> = {
  BAD_ARGS: 'BAD_ARGS',
  BAD_SCHEMA: 'BAD_ARGS',
  BAD_CONFIG: 'BAD_ARGS',
  NO_UNIVERSE: 'NOT_FOUND',
  ALREADY_RUNNING: 'BAD_ARGS',
  TIMEOUT: 'NONE_AVAILABLE',
  UNREACHABLE: 'NONE_AVAILABLE',
  AUTH_FAILED: 'NONE_AVAILABLE',
  PROTOCOL: 'NONE_AVAILABLE',
  UNKNOWN_NODE: 'NOT_FOUND',
  LAUNCH_FAILED: 'NONE_AVAILABLE',
  NOT_INSTALLED: 'NOT_FOUND',
  LAMD_LOST: 'NONE_AVAILABLE',
  REMOTE: 'NONE_AVAILABLE',
  CLOSED: 'NONE_AVAILABLE',
};

/**
 * Every failure of the run-time environment: an SsiError (so the CLI prints it as one line)
 * whose `failure` says what kind. core's codes are a closed set, hence the mapping.
 */
export class LamError extends SsiError {
  constructor(
    readonly failure: LamFailure,
    message: string,
  ) {
    super(CORE_CODE[failure], message);
  }
}

export function isLamError(err: unknown, failure?: LamFailure): err is LamError {
  return err instanceof LamError && (failure === undefined || err.failure === failure);
}

export function lamFailureName(value: string): LamFailure | undefined {
  return Object.hasOwn(CORE_CODE, value) ? (value as LamFailure) : undefined;
}
