// msgpackr/pack is msgpackr's pure-JS build (Packr and Unpackr): its main Node entry loads a
// native string extractor through detect-libc and node:stream, ~20 ms of CPU and 20-40 ms of
// wall time in every process at start-up for no gain on these small messages (issue 19).
import { Packr } from 'msgpackr/pack';
import { ErrorClass, MpiError } from './errors';

/**
 * What travels in a message, in the envelope's kind byte: raw bytes of a typed array, Buffer or
 * DataView (the receiver can rebuild the same type when it receives without a buffer), or a
 * msgpackr-encoded value (the "object" tier of mpi4py).
 */
export const DataKind = {
  OBJECT: 0,
  BUFFER: 1,
  UINT8: 2,
  INT8: 3,
  UINT8_CLAMPED: 4,
  INT16: 5,
  UINT16: 6,
  INT32: 7,
  UINT32: 8,
  FLOAT32: 9,
  FLOAT64: 10,
  BIGINT64: 11,
  BIGUINT64: 12,
  DATAVIEW: 13,
} as const;

export type DataKindValue = (typeof DataKind)[keyof typeof DataKind];

/** Any typed array, Buffer or DataView: sent and received as raw bytes. */
export type BufferLike = ArrayBufferView;

type ViewCtor = new (
  buffer: ArrayBufferLike,
  byteOffset: number,
  length: number,
) => ArrayBufferView;

interface KindInfo {
  kind: DataKindValue;
  size: number;
  ctor: ViewCtor;
  name: string;
}

const KINDS: KindInfo[] = [];
const BY_CTOR = new Map<unknown, KindInfo>();

function defineKind(kind: DataKindValue, ctor: unknown, size: number, name: string) {
  const info = { kind, ctor: ctor as ViewCtor, size, name };
  KINDS[kind] = info;
  BY_CTOR.set(ctor, info);
}
defineKind(DataKind.BUFFER, Buffer, 1, 'Buffer');
defineKind(DataKind.UINT8, Uint8Array, 1, 'Uint8Array');
defineKind(DataKind.INT8, Int8Array, 1, 'Int8Array');
defineKind(DataKind.UINT8_CLAMPED, Uint8ClampedArray, 1, 'Uint8ClampedArray');
defineKind(DataKind.INT16, Int16Array, 2, 'Int16Array');
defineKind(DataKind.UINT16, Uint16Array, 2, 'Uint16Array');
defineKind(DataKind.INT32, Int32Array, 4, 'Int32Array');
defineKind(DataKind.UINT32, Uint32Array, 4, 'Uint32Array');
defineKind(DataKind.FLOAT32, Float32Array, 4, 'Float32Array');
defineKind(DataKind.FLOAT64, Float64Array, 8, 'Float64Array');
defineKind(DataKind.BIGINT64, BigInt64Array, 8, 'BigInt64Array');
defineKind(DataKind.BIGUINT64, BigUint64Array, 8, 'BigUint64Array');
defineKind(DataKind.DATAVIEW, DataView, 1, 'DataView');

const packr = new Packr({ useRecords: false, moreTypes: true });

/** The kind of a buffer-like value; `OBJECT` for everything else. */
export function kindOf(value: unknown): DataKindValue {
  if (value !== null && typeof value === 'object' && ArrayBuffer.isView(value)) {
    const info = BY_CTOR.get(value.constructor);
    if (info) return info.kind;
    // A subclass of a typed array: find its base.
    for (const k of KINDS) if (k && value instanceof (k.ctor as never)) return k.kind;
  }
  return DataKind.OBJECT;
}

/** Bytes per element of a kind (1 for objects, buffers and DataViews). */
export function elementSize(kind: number): number {
  return KINDS[kind]?.size ?? 1;
}

export function kindName(kind: number): string {
  return kind === DataKind.OBJECT ? 'object' : (KINDS[kind]?.name ?? `kind ${kind}`);
}

/** The bytes of a buffer-like value, without copying (the value itself when it is a Uint8Array). */
export function bytesOf(view: ArrayBufferView): Uint8Array {
  if (view instanceof Uint8Array) return view;
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/** Encodes any value for sending: raw bytes for buffer-likes, msgpackr otherwise. */
export function encodeValue(value: unknown): { bytes: Uint8Array; kind: DataKindValue } {
  const kind = kindOf(value);
  if (kind !== DataKind.OBJECT) return { bytes: bytesOf(value as ArrayBufferView), kind };
  try {
    return { bytes: packr.pack(value), kind };
  } catch (err) {
    throw new MpiError(
      ErrorClass.ERR_TYPE,
      `cannot encode the value to send with msgpackr: ${(err as Error).message}`,
    );
  }
}

/** The message value a receive without a buffer returns: a typed array of the sent kind or the decoded object. */
export function decodeValue(bytes: Uint8Array, kind: number): unknown {
  if (kind === DataKind.OBJECT) {
    try {
      return packr.unpack(bytes);
    } catch (err) {
      throw new MpiError(
        ErrorClass.ERR_TYPE,
        `the received message is not valid msgpackr data: ${(err as Error).message}`,
      );
    }
  }
  const info = KINDS[kind];
  if (!info) throw new MpiError(ErrorClass.ERR_TYPE, `unknown data kind ${kind} in a message`);
  if (kind === DataKind.BUFFER) {
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  if (kind === DataKind.UINT8) {
    return bytes.constructor === Uint8Array
      ? bytes
      : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  if (info.size > 1 && (bytes.byteOffset % info.size !== 0 || bytes.byteLength % info.size !== 0)) {
    if (bytes.byteLength % info.size !== 0) {
      throw new MpiError(
        ErrorClass.ERR_TYPE,
        `a ${info.name} message of ${bytes.byteLength} bytes is not a whole number of elements`,
      );
    }
    const copy = new Uint8Array(bytes.byteLength);
    copy.set(bytes);
    bytes = copy;
  }
  return new info.ctor(bytes.buffer, bytes.byteOffset, bytes.byteLength / info.size);
}

/**
 * Memory for a message of `length` bytes that a receive without a buffer will adopt: its own
 * ArrayBuffer at offset 0, so that any element type can view it aligned.
 */
export function allocMessage(length: number): Uint8Array {
  return Buffer.allocUnsafeSlow(length);
}
