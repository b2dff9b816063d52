import type { NumericArray } from './types';

/*
 * Scratch memory for reductions, shared by every coll module (lam_basic, tuned, third parties)
 * so that none keeps a copy of another's helpers.
 */

/** A zero-filled array of the same element type as `like` (Buffers get a plain Uint8Array). */
export function similarArray<T extends NumericArray>(like: T, length: number = like.length): T {
  if (Buffer.isBuffer(like)) return new Uint8Array(length) as T;
  const ctor = like.constructor as new (length: number) => T;
  return new ctor(length);
}

/** A copy of `array` in memory of its own. */
export function copyOfArray<T extends NumericArray>(array: T): T {
  const copy = similarArray(array);
  copy.set(array as never);
  return copy;
}
