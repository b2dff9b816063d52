import type { BufferLike } from '../data';
import { bytesOf, DataKind, kindName } from '../data';
import { ErrorClass, MpiError } from '../errors';
import type { RpiRequest } from '../rpi/request';
import type { RecvScatter, RpiGather, RpiScatter } from '../rpi/types';
import { Datatype } from './datatype';
import { gatherList } from './gather-list';
import { LayoutScatter } from './layout-scatter';
import { checkSpan, isContiguousAtStart, packInto, unpackFrom } from './pack';
import { returnScratch, takeScratch } from './scratch';

/**
 * `[buffer, datatype, count]`: what every send, receive and collective accepts besides a plain
 * typed array or value (count defaults to 1). On the wire it is the packed form, so a derived
 * type on one side matches a plain typed array (or `pack`ed bytes) on the other.
 */
export type TypedMessage = readonly [buffer: BufferLike, datatype: Datatype, count?: number];

export function isTypedMessage(v: unknown): v is TypedMessage {
  return Array.isArray(v) && (v.length === 2 || v.length === 3) && v[1] instanceof Datatype;
}

/** The parts of a typed message, checked: a buffer, a committed type, a count that fits. */
export function partsOf(
  m: TypedMessage,
  call: string,
): { buf: BufferLike; type: Datatype; count: number } {
  const [buf, type, count = 1] = m;
  if (!(typeof buf === 'object' && buf !== null && ArrayBuffer.isView(buf))) {
    throw new MpiError(
      ErrorClass.ERR_BUFFER,
      `${call}: the buffer of [buffer, datatype, count] must be a typed array, Buffer or DataView`,
    );
  }
  if (!Number.isInteger(count) || count < 0) {
    throw new MpiError(
      ErrorClass.ERR_COUNT,
      `${call}: count = ${String(count)} in [buffer, datatype, count] is not an integer >= 0`,
    );
  }
  type.checkUsable(call);
  checkSpan(buf, type, count, call);
  return { buf, type, count };
}

/**
 * The bytes to send for a typed message: the buffer itself when contiguous, else packed into
 * staging memory (`staged`: give it back with `releasePacked` once the send is complete).
 */
export function packMessage(
  m: TypedMessage,
  call: string,
): { bytes: Uint8Array; kind: number; staged: boolean } {
  const { buf, type, count } = partsOf(m, call);
  const kind = type.messageKind;
  const n = count * type.size;
  if (isContiguousAtStart(type, count)) {
    return { bytes: bytesOf(buf).subarray(type.trueLb, type.trueLb + n), kind, staged: false };
  }
  const out = takeScratch(n);
  packInto(buf, type, count, out, 0);
  return { bytes: out, kind, staged: true };
}

/**
 * A non-contiguous typed message as a list of ranges of its buffer, for an rpi that writes them
 * itself (`offer`: its thresholds); null when the type is contiguous or packing is cheaper.
 */
export function gatherMessage(
  m: TypedMessage,
  call: string,
  offer: RpiGather,
): { list: Uint8Array[]; kind: number } | null {
  const { buf, type, count } = partsOf(m, call);
  if (isContiguousAtStart(type, count)) return null;
  const list = gatherList(buf, type, count, offer);
  return list === null ? null : { list, kind: type.messageKind };
}

/** Gives back the staging memory of a completed send of `packMessage`. */
export function releasePacked(packed: { bytes: Uint8Array; staged: boolean }): void {
  if (packed.staged) returnScratch(packed.bytes);
}

/**
 * Where a receive puts the bytes and how it finishes: into the caller's buffer directly (a plain
 * buffer or a contiguous type); into the layout as the bytes arrive (`scatter`, when the rpi
 * offers it); else into a packed staging area that `finish` unpacks.
 */
export interface RecvLayout {
  /** The receive buffer; null when the receive is scattered. */
  bytes: Uint8Array | null;
  /** The incremental unpacker into the caller's layout (`req.scatter`), or null. */
  scatter: RecvScatter | null;
  /** The receive's element kind (the type's one kind, or BUFFER). */
  kind: number;
  /** Bytes per counted item for the status (the type's size; 0: the sender's element type). */
  elementBytes: number;
  /** Runs after the receive completed: unpacks, checks the signature; returns its error. */
  finish(req: RpiRequest): MpiError | null;
}

/**
 * The layout of a receive into `into`. `once`: the receive completes once (not persistent) and
 * nothing keeps its bytes after `finish`, so its staging memory is reused memory, given back then. `offer`: the rpi's
 * `RpiActions.scatter` (null: stage a non-contiguous receive).
 */
export function recvLayout(
  into: BufferLike | TypedMessage,
  call: string,
  once = false,
  offer: RpiScatter | null = null,
): RecvLayout {
  if (!isTypedMessage(into)) {
    throw new MpiError(ErrorClass.ERR_INTERN, `${call}: recvLayout of a plain buffer`);
  }
  const { buf, type, count } = partsOf(into, call);
  const n = count * type.size;
  const contiguous = isContiguousAtStart(type, count);
  const kind = type.messageKind;
  const elementBytes = Math.max(type.size, 1);
  if (!contiguous && offer !== null && n >= offer.minBytes) {
    const check = (sent: number, length: number) => signatureMismatch(type, sent, length, call);
    return {
      bytes: null,
      scatter: new LayoutScatter(buf, type, count, check),
      kind,
      elementBytes,
      // The signature was checked at match (the bytes were dropped on a mismatch).
      finish: (req) => req.error,
    };
  }
  const staged = !contiguous && once;
  const bytes = contiguous
    ? bytesOf(buf).subarray(type.trueLb, type.trueLb + n)
    : staged
      ? takeScratch(n)
      : Buffer.allocUnsafeSlow(n);
  const finishRecv = (req: RpiRequest): MpiError | null => {
    if (req.cancelled || (req.error && req.error.errorClass !== ErrorClass.ERR_TRUNCATE)) {
      return req.error;
    }
    const mismatch = signatureMismatch(type, req.stKind, req.stLength, call);
    if (mismatch) return mismatch;
    if (!contiguous) unpackFrom(bytes, 0, req.stLength, buf, type, count);
    return req.error;
  };
  return {
    bytes,
    scatter: null,
    kind,
    elementBytes,
    finish: (req) => {
      const err = finishRecv(req);
      if (staged) returnScratch(bytes);
      return err;
    },
  };
}

/** Kinds that carry untyped bytes: they match any type signature (`MPI_BYTE`, `MPI_PACKED`). */
function untyped(kind: number): boolean {
  return kind === DataKind.BUFFER || kind === DataKind.UINT8 || kind === DataKind.DATAVIEW;
}

/**
 * The error of a message whose element type differs from the receive type's (where both name
 * one numeric element type; mixed and byte types are not checked).
 */
export function signatureMismatch(
  type: Datatype,
  sent: number,
  length: number,
  call: string,
): MpiError | null {
  const want = type.map.homogeneousKind;
  if (length === 0 || want < 0 || untyped(want) || untyped(sent) || sent === want) return null;
  return new MpiError(
    ErrorClass.ERR_TYPE,
    sent === DataKind.OBJECT
      ? `${call}: the message is a msgpackr-encoded object but the receive type is ${type.name}`
      : `${call}: type signatures differ: the message holds ${kindName(sent)} elements but the ` +
          `receive type ${type.name} has ${kindName(want)} elements`,
  );
}
