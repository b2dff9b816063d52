import type { SsiErrorCode } from '@ssi/core';
import { SsiError } from '@ssi/core';

/** MPI error classes (MPI-1 §7.5, plus the MPI-2 classes point-to-point can raise). */
export const ErrorClass = {
  SUCCESS: 0,
  ERR_BUFFER: 1,
  ERR_COUNT: 2,
  ERR_TYPE: 3,
  ERR_TAG: 4,
  ERR_COMM: 5,
  ERR_RANK: 6,
  ERR_REQUEST: 7,
  ERR_ROOT: 8,
  ERR_GROUP: 9,
  ERR_OP: 10,
  ERR_TOPOLOGY: 11,
  ERR_DIMS: 12,
  ERR_ARG: 13,
  ERR_UNKNOWN: 14,
  ERR_TRUNCATE: 15,
  ERR_OTHER: 16,
  ERR_INTERN: 17,
  ERR_IN_STATUS: 18,
  ERR_PENDING: 19,
} as const;

export type ErrorClassName = keyof typeof ErrorClass;
export type ErrorClassValue = (typeof ErrorClass)[ErrorClassName];

const NAMES = new Map<number, ErrorClassName>(
  Object.entries(ErrorClass).map(([k, v]) => [v, k as ErrorClassName]),
);

export function errorClassName(value: number): ErrorClassName {
  return NAMES.get(value) ?? 'ERR_UNKNOWN';
}

/**
 * Every error of the MPI layer: an `SsiError` whose `code` is the MPI class name ("ERR_RANK")
 * and whose `errorClass` is the MPI class number (`ErrorClass.ERR_RANK`). The message names the
 * call, the rank and what was expected.
 */
export class MpiError extends SsiError {
  readonly errorClass: ErrorClassValue;
  /** The per-request errors of an `ERR_IN_STATUS` raised by waitall/waitsome/testall. */
  errors?: (MpiError | null)[];

  constructor(errorClass: ErrorClassValue, message: string) {
    // SsiErrorCode is a closed union in @ssi/core; the MPI layer's codes are the MPI class names.
    super(errorClassName(errorClass) as unknown as SsiErrorCode, message);
    this.errorClass = errorClass;
  }

  /** "ERR_RANK", "ERR_TRUNCATE", ... */
  get className(): ErrorClassName {
    return errorClassName(this.errorClass);
  }
}

export function isMpiError(err: unknown): err is MpiError {
  return err instanceof MpiError;
}
