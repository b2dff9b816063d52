import type { NumericArray } from '@ssi/mpi';

/** Zero-byte messages (barriers) can all share one buffer. */
export const NOTHING = new Uint8Array(0);

/** Elements [lo, hi) of `array`, sharing its memory. */
export function slice<T extends NumericArray>(array: T, lo: number, hi: number): T {
  return array.subarray(lo, hi) as T;
}

/** Block `i` of `count` equal blocks of `buf`. */
export function blockOf(buf: Uint8Array, i: number, count: number): Uint8Array {
  const size = buf.length / count;
  return buf.subarray(i * size, (i + 1) * size);
}
