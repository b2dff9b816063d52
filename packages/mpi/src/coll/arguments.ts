import { type BufferLike, bytesOf } from '../data';
import { ErrorClass, MpiError } from '../errors';
import type { ReduceOp } from './ops';
import type { NumericArray, VLayout } from './types';

/** `MPI_IN_PLACE`: pass it as the data where MPI allows; the data is then taken from `into`. */
export const IN_PLACE: unique symbol = Symbol('MPI.IN_PLACE');
export type InPlace = typeof IN_PLACE;

export function isBuffer(v: unknown): v is BufferLike {
  return typeof v === 'object' && v !== null && ArrayBuffer.isView(v);
}

const NUMERIC = [
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
];

export function isNumericArray(v: unknown): v is NumericArray {
  return NUMERIC.some((ctor) => v instanceof ctor);
}

/** How a reduction's operand was given, to hand the result back in the same shape. */
export type OperandShape = 'array' | 'number' | 'bigint' | 'numbers' | 'bigints';

/**
 * A reduction operand as a typed array: typed arrays as they are, a number or bigint as a
 * one-element Float64Array / BigInt64Array, an array of numbers (or bigints) likewise.
 */
export function toOperand(
  data: unknown,
  call: string,
): { array: NumericArray; shape: OperandShape } {
  if (isNumericArray(data)) return { array: data, shape: 'array' };
  if (typeof data === 'number') return { array: new Float64Array([data]), shape: 'number' };
  if (typeof data === 'bigint') return { array: new BigInt64Array([data]), shape: 'bigint' };
  if (Array.isArray(data) && data.every((x) => typeof x === 'number')) {
    return { array: Float64Array.from(data), shape: 'numbers' };
  }
  if (Array.isArray(data) && data.every((x) => typeof x === 'bigint')) {
    return { array: BigInt64Array.from(data as bigint[]), shape: 'bigints' };
  }
  throw new MpiError(
    ErrorClass.ERR_TYPE,
    `${call}: cannot reduce ${describe(data)}; give a typed array, a number, a bigint or an array of numbers`,
  );
}

export function fromOperand(array: NumericArray, shape: OperandShape): unknown {
  switch (shape) {
    case 'number':
    case 'bigint':
      return array[0];
    case 'numbers':
    case 'bigints':
      return Array.from(array as ArrayLike<number | bigint>);
    default:
      return array;
  }
}

export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (isBuffer(v)) return `a ${v.constructor.name} of ${v.byteLength} bytes`;
  if (Array.isArray(v)) return `an array of ${v.length}`;
  return `a ${typeof v}`;
}

/** An empty array of the same element type as `like`, with `length` elements. */
export function sameKind<T extends NumericArray | BufferLike>(like: T, length: number): T {
  if (like instanceof DataView) return new DataView(new ArrayBuffer(length)) as unknown as T;
  const ctor = like.constructor as new (n: number) => T;
  return new ctor(length);
}

export function elementBytes(v: BufferLike): number {
  return (v as { BYTES_PER_ELEMENT?: number }).BYTES_PER_ELEMENT ?? 1;
}

export function checkOp(op: ReduceOp, array: NumericArray, call: string): void {
  if (!op || typeof op.apply !== 'function' || typeof op.check !== 'function') {
    throw new MpiError(
      ErrorClass.ERR_OP,
      `${call}: the operator is not a reduction operator (SUM, MAX, createOp(...))`,
    );
  }
  const why = op.check(array);
  if (why) throw new MpiError(ErrorClass.ERR_OP, `${call}: ${why}`);
}

/**
 * Byte layout of a v-collective from element counts and displacements (displacements default to
 * the running sum), checked against the buffer they index.
 */
export function layoutOf(
  counts: readonly number[],
  displs: readonly number[] | undefined,
  size: number,
  buf: BufferLike | null,
  call: string,
): VLayout {
  if (!Array.isArray(counts) || counts.length !== size) {
    throw new MpiError(
      ErrorClass.ERR_COUNT,
      `${call}: counts must have ${size} entries, one per rank`,
    );
  }
  const d = displs ?? prefixSums(counts);
  if (d.length !== size) {
    throw new MpiError(
      ErrorClass.ERR_ARG,
      `${call}: displacements must have ${size} entries, one per rank`,
    );
  }
  const eb = buf ? elementBytes(buf) : 1;
  for (let i = 0; i < size; i++) {
    const c = counts[i]!;
    const o = d[i]!;
    if (!Number.isInteger(c) || c < 0) {
      throw new MpiError(
        ErrorClass.ERR_COUNT,
        `${call}: counts[${i}] = ${String(c)} is not a count`,
      );
    }
    if (!Number.isInteger(o) || o < 0) {
      throw new MpiError(
        ErrorClass.ERR_ARG,
        `${call}: displs[${i}] = ${String(o)} is not a displacement`,
      );
    }
    if (buf && (o + c) * eb > buf.byteLength) {
      throw new MpiError(
        ErrorClass.ERR_TRUNCATE,
        `${call}: block ${i} (displacement ${o}, ${c} elements) runs past the end of the ${buf.byteLength / eb}-element buffer`,
      );
    }
  }
  return { counts: counts.map((c) => c * eb), displs: d.map((o) => o * eb) };
}

export function prefixSums(counts: readonly number[]): number[] {
  const out: number[] = [];
  let sum = 0;
  for (const c of counts) {
    out.push(sum);
    sum += c;
  }
  return out;
}

/** Checks that `into` can hold `blocks` blocks of `blockBytes` bytes. */
export function checkRoom(
  into: BufferLike,
  blocks: number,
  blockBytes: number,
  call: string,
): void {
  if (into.byteLength !== blocks * blockBytes) {
    throw new MpiError(
      ErrorClass.ERR_TRUNCATE,
      `${call}: the receive buffer has ${into.byteLength} bytes; ${blocks} block(s) of ${blockBytes} bytes need ${blocks * blockBytes}`,
    );
  }
}

export { bytesOf };
