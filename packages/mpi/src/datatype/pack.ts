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
function wordSize(type: Datatype, addrA: number, addrB: number): 1 | 2 | 4 {
  let bits = addrA | addrB | type.extent;
  const { segDisp, segLen } = type.map;
  for (let s = 0; s < segDisp.length && (bits & 3) !== 1; s++) bits |= segDisp[s]! | segLen[s]!;
  if ((bits & 3) === 0) return 4;
  return (bits & 1) === 0 ? 2 : 1;
}

type Words = Int32Array | Int16Array | Uint8Array;

function wordsOf(buffer: ArrayBufferLike, w: 1 | 2 | 4): Words {
  const n = Math.floor(buffer.byteLength / w);
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
  const { segDisp, segLen } = type.map;
  let o = dstAddr / w;
  for (let k = 0; k < count; k++) {
    const base = (buf.byteOffset + k * type.extent) / w;
    for (let s = 0; s < segDisp.length; s++) {
      const d = base + segDisp[s]! / w;
      const n = segLen[s]! / w;
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
  let left = want;
  if (left <= 0) return pos;
  const srcAddr = from.byteOffset + pos;
  const w = wordSize(type, buf.byteOffset, srcAddr);
  const src = wordsOf(from.buffer, w);
  const dst = wordsOf(buf.buffer, w);
  const { segDisp, segLen } = type.map;
  let o = srcAddr / w;
  for (let k = 0; k < count && left > 0; k++) {
    const base = (buf.byteOffset + k * type.extent) / w;
    for (let s = 0; s < segDisp.length && left > 0; s++) {
      const d = base + segDisp[s]! / w;
      if (segLen[s]! > left) {
        // The message ends inside this segment: copy its remaining bytes one by one.
        copyBytes(from, o * w - from.byteOffset, buf, d * w - buf.byteOffset, left);
        return pos + want;
      }
      const n = segLen[s]! / w;
      if (n <= SHORT_SEGMENT) {
        for (let i = 0; i < n; i++) dst[d + i] = src[o + i]!;
      } else {
        dst.set(src.subarray(o, o + n), d);
      }
      o += n;
      left -= segLen[s]!;
    }
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
