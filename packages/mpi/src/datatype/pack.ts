import type { BufferLike } from '../data';
import { ErrorClass, MpiError } from '../errors';
import type { Datatype } from './datatype';

/**
 * Copying between a buffer laid out by a datatype and its packed (contiguous) form: the one loop
 * behind `pack`/`unpack` and behind every send and receive of a derived type. It copies in the
 * widest word (4, 2 or 1 bytes) that every displacement, length and the extent allow, element by
 * element for short segments and with `TypedArray.set` for long ones.
 */

/** Segments up to this many words are copied by a loop: cheaper than making a subarray view. */
const SHORT_SEGMENT = 16;

/** Checks that `count` instances of `type` at `buf` stay inside the memory they may use. */
export function checkSpan(buf: BufferLike, type: Datatype, count: number, call: string): void {
  if (count === 0 || type.size === 0) return;
  const reach = (count - 1) * type.extent;
  const low = buf.byteOffset + type.trueLb + Math.min(0, reach);
  const high = buf.byteOffset + type.trueLb + type.trueExtent + Math.max(0, reach);
  const end = buf.byteOffset + buf.byteLength;
  if (low < 0 || high > end) {
    throw new MpiError(
      ErrorClass.ERR_BUFFER,
      `${call}: ${count} × ${type.name} spans bytes ${low - buf.byteOffset} to ` +
        `${high - buf.byteOffset} of the buffer, which has ${buf.byteLength} bytes ` +
        `(negative displacements may reach before the view only inside its ArrayBuffer)`,
    );
  }
}

/** The widest word size every address of the copy is a multiple of. */
export function wordSize(type: Datatype, addrA: number, addrB: number): 1 | 2 | 4 | 8 {
  let bits = addrA | addrB | type.extent;
  const { segDisp, segLen } = type.map;
  for (let s = 0; s < segDisp.length && (bits & 1) === 0; s++) bits |= segDisp[s]! | segLen[s]!;
  if ((bits & 7) === 0) return 8;
  if ((bits & 3) === 0) return 4;
  return (bits & 1) === 0 ? 2 : 1;
}

// 8-byte words are copied as float64: V8 moves the bits of a typed-array double unchanged (NaN
// payloads included, in every tier; the unit tests check it), and one load per element is what
// makes a strided column as cheap as a loop written by hand.
export type Words = Float64Array | Int32Array | Int16Array | Uint8Array;

export function wordsOf(buffer: ArrayBufferLike, w: 1 | 2 | 4 | 8): Words {
  const n = Math.floor(buffer.byteLength / w);
  if (w === 8) return new Float64Array(buffer, 0, n);
  if (w === 4) return new Int32Array(buffer, 0, n);
  if (w === 2) return new Int16Array(buffer, 0, n);
  return new Uint8Array(buffer, 0, n);
}

/**
 * Packs `count` instances of `type` from `buf` into `out` at byte `pos`; returns the position
 * after them. `out` must have room (`count * type.size` bytes).
 */
export function packInto(
  buf: BufferLike,
  type: Datatype,
  count: number,
  out: Uint8Array,
  pos: number,
): number {
  const total = count * type.size;
  if (total === 0) return pos;
  const dstAddr = out.byteOffset + pos;
  const w = wordSize(type, buf.byteOffset, dstAddr);
  const src = wordsOf(buf.buffer, w);
  const dst = wordsOf(out.buffer, w);
  const { disp, len, uniform, step } = type.map.words(w);
  // Word indices as small integers (| 0): V8 then indexes without float conversions.
  const ext = (type.extent / w) | 0;
  let base = (buf.byteOffset / w) | 0;
  let o = (dstAddr / w) | 0;
  if (uniform === 1 && step !== 0) {
    // A column: one word every `step` words, no table to read.
    const segs = disp.length;
    for (let k = 0; k < count; k++, base += ext) {
      let at = (base + disp[0]!) | 0;
      for (let s = 0; s < segs; s++, at += step) dst[o++] = src[at]!;
    }
    return pos + total;
  }
  if (uniform === 1) {
    // One word per segment (a column of doubles): the tightest loop.
    for (let k = 0; k < count; k++, base += ext) {
      for (let s = 0; s < disp.length; s++) dst[o++] = src[base + disp[s]!]!;
    }
    return pos + total;
  }
  for (let k = 0; k < count; k++, base += ext) {
    for (let s = 0; s < disp.length; s++) {
      const d = base + disp[s]!;
      const n = len[s]!;
      if (n <= SHORT_SEGMENT) {
        for (let i = 0; i < n; i++) dst[o + i] = src[d + i]!;
      } else {
        dst.set(src.subarray(d, d + n), o);
      }
      o += n;
    }
  }
  return pos + total;
}

/**
 * Unpacks up to `bytes` bytes of packed data from `from` (at byte `pos`) into `count` instances
 * of `type` at `buf`, in type-map order (a short message fills a prefix). Returns the position
 * after what was read.
 */
export function unpackFrom(
  from: Uint8Array,
  pos: number,
  bytes: number,
  buf: BufferLike,
  type: Datatype,
  count: number,
): number {
  const want = Math.min(bytes, count * type.size);
  if (want <= 0) return pos;
  const srcAddr = from.byteOffset + pos;
  const w = wordSize(type, buf.byteOffset, srcAddr);
  const src = wordsOf(from.buffer, w);
  const dst = wordsOf(buf.buffer, w);
  const { disp, len, uniform, step } = type.map.words(w);
  // Word indices as small integers (| 0): V8 then indexes without float conversions.
  const ext = (type.extent / w) | 0;
  let base = (buf.byteOffset / w) | 0;
  let o = (srcAddr / w) | 0;
  // Whole instances first (the common case, on the fast loops), then the partial last one.
  const whole = Math.floor(want / type.size);
  if (uniform === 1 && step !== 0) {
    const segs = disp.length;
    for (let k = 0; k < whole; k++, base += ext) {
      let at = (base + disp[0]!) | 0;
      for (let s = 0; s < segs; s++, at += step) dst[at] = src[o++]!;
    }
  } else if (uniform === 1) {
    for (let k = 0; k < whole; k++, base += ext) {
      for (let s = 0; s < disp.length; s++) dst[base + disp[s]!] = src[o++]!;
    }
  } else {
    for (let k = 0; k < whole; k++, base += ext) {
      for (let s = 0; s < disp.length; s++) {
        const d = base + disp[s]!;
        const n = len[s]!;
        if (n <= SHORT_SEGMENT) {
          for (let i = 0; i < n; i++) dst[d + i] = src[o + i]!;
        } else {
          dst.set(src.subarray(o, o + n), d);
        }
        o += n;
      }
    }
  }
  let left = want - whole * type.size;
  for (let s = 0; s < disp.length && left > 0; s++) {
    // The message ends inside the last instance: copy segment by segment, byte-wise.
    const n = Math.min(len[s]! * w, left);
    copyBytes(from, o * w - from.byteOffset, buf, (base + disp[s]!) * w - buf.byteOffset, n);
    o += n / w; // only the last copy can end off a word; nothing is read after it
    left -= n;
  }
  return pos + want;
}

function copyBytes(from: Uint8Array, at: number, buf: BufferLike, to: number, n: number): void {
  const dst = new Uint8Array(buf.buffer, buf.byteOffset + to, n);
  dst.set(from.subarray(at, at + n));
}

/** Whether `count` instances of `type` are one contiguous run of bytes starting at the buffer start. */
export function isContiguousAtStart(type: Datatype, count: number): boolean {
  const { segDisp, segLen } = type.map;
  if (count === 0 || type.size === 0) return true;
  return segDisp.length === 1 && segDisp[0] === 0 && (count === 1 || segLen[0] === type.extent);
}
