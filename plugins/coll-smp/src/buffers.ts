import type { NumericArray } from '@ssi/mpi';

/** The bytes of a typed array, for point-to-point on the collective channel (no copy). */
export function bytesOf(a: NumericArray): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** A new zeroed array of the same element type and length: a leader's partial result. */
export function sameKind(a: NumericArray): NumericArray {
  const Ctor = a.constructor as new (length: number) => NumericArray;
  return new Ctor(a.length);
}

/** Copies `from` into `to` (same element type and length, checked by the MPI layer). */
export function copyInto(to: NumericArray, from: NumericArray): void {
  bytesOf(to).set(bytesOf(from));
}

const kept = new WeakMap<object, Map<string, NumericArray>>();

/**
 * A scratch array like `a` (same type and length) that `owner` keeps for its next calls, one per
 * `slot`: for buffers a call fills and empties before it returns, so a later call may reuse them
 * instead of allocating (and zeroing) megabytes each time.
 */
export function keptLike(owner: object, a: NumericArray, slot: number): NumericArray {
  const byKey = kept.get(owner) ?? new Map<string, NumericArray>();
  kept.set(owner, byKey);
  const key = `${a.constructor.name}:${a.length}:${slot}`;
  const got = byKey.get(key) ?? sameKind(a);
  byKey.set(key, got);
  return got;
}
