/**
 * Every failure core reports is an SsiError: a message written for the person at the terminal
 * (what was wrong, what was expected, what to do) plus a stable code for programs.
 */
export type SsiErrorCode =
  | 'BAD_VERSION'
  | 'BAD_MANIFEST'
  | 'BAD_MODULE'
  | 'INCOMPATIBLE'
  | 'DUPLICATE'
  | 'BAD_PARAM'
  | 'BAD_ARGS'
  | 'PARAM_FILE'
  | 'NOT_FOUND'
  | 'NONE_AVAILABLE'
  | 'DISAGREEMENT';

export class SsiError extends Error {
  override readonly name = 'SsiError';
  constructor(
    readonly code: SsiErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export function isSsiError(err: unknown): err is SsiError {
  return err instanceof Error && (err as SsiError).name === 'SsiError' && 'code' in err;
}
