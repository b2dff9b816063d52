/**
 * Checks for the test programs (conformance, collectives): a failed check throws, which aborts
 * the job with a message naming the rank and the check.
 */
import { isDeepStrictEqual } from 'node:util';
import { withDeadline } from '@ssi/lam';
import { MpiError } from '../errors';

export class CheckFailed extends Error {}

export function check(cond: unknown, message: string): asserts cond {
  if (!cond) throw new CheckFailed(`check failed: ${message}`);
}

export function equal(actual: unknown, expected: unknown, what: string): void {
  if (!isDeepStrictEqual(actual, expected)) {
    const show = (v: unknown) => {
      const s =
        typeof v === 'bigint'
          ? `${v}n`
          : JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}n` : x));
      return s && s.length > 200 ? `${s.slice(0, 200)}…` : s;
    };
    throw new CheckFailed(`check failed: ${what}: got ${show(actual)}, expected ${show(expected)}`);
  }
}

export async function expectError(
  fn: () => unknown,
  errorClass: number,
  what: string,
): Promise<MpiError> {
  try {
    await fn();
  } catch (err) {
    check(err instanceof MpiError, `${what}: threw ${String(err)} instead of an MpiError`);
    equal(err.className, new MpiError(errorClass as never, '').className, `${what}: error class`);
    return err;
  }
  throw new CheckFailed(`check failed: ${what}: no error was raised`);
}

/** Waits for `p` or fails loudly after `ms`, naming what was awaited. */
export function within<T>(p: Promise<T>, what: string, ms = 30_000): Promise<T> {
  return withDeadline(p, ms, () => new CheckFailed(`timed out after ${ms} ms waiting for ${what}`));
}
