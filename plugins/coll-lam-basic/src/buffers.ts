import type { NumericArray } from '@ssi/mpi';

/** A zero-filled array of the same element type as `like` (Buffers get a plain Uint8Array). */
export function similar<T extends NumericArray>(like: T, length: number = like.length): T {
  if (Buffer.isBuffer(like)) return new Uint8Array(length) as T;
  const ctor = like.constructor as new (length: number) => T;
  return new ctor(length);
}

/** A copy of `array` in memory of its own. */
export function copyOf<T extends NumericArray>(array: T): T {
  const copy = similar(array);
  copy.set(array as never);
  return copy;
}

/** Sum of a list of counts. */
export function total(counts: readonly number[]): number {
  let sum = 0;
  for (const c of counts) sum += c;
  return sum;
}
