import type { NumericArray } from '@ssi/mpi';

/** Zero-byte messages (barriers) can all share one buffer. */
export const NOTHING = new Uint8Array(0);

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

/** Elements [lo, hi) of `array`, sharing its memory. */
export function slice<T extends NumericArray>(array: T, lo: number, hi: number): T {
  return array.subarray(lo, hi) as T;
}

/** Block `i` of `count` equal blocks of `buf`. */
export function blockOf(buf: Uint8Array, i: number, count: number): Uint8Array {
  const size = buf.length / count;
  return buf.subarray(i * size, (i + 1) * size);
}
