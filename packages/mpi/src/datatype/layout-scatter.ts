import type { BufferLike } from '../data';
import type { MpiError } from '../errors';
import type { RecvScatter } from '../rpi/types';
import type { Datatype } from './datatype';
import { wordSize, wordsOf } from './pack';

/**
 * The receive side of issue 20: an incremental unpacker over a type map, so that a derived-type
 * receive lands in the user's layout as its bytes arrive (no staging buffer of the message's
 * size, no second pass over it). The rpi hands over chunks of the packed form at known offsets
 * (`write`), in whatever pieces its reads produced — a chunk may begin or end inside an element
 * or a block —, or reads straight into the user's memory where a contiguous run is long enough
 * (`run`). A cursor makes the usual in-order chunks cost no search.
 *
 * Chunks are copied in the widest word (8, 4, 2 or 1 bytes) the type, the user's buffer and
 * the chunk's address allow; a chunk whose address does not line up with its packed offset (the
 * first one, read together with an envelope) is copied through a small aligned bounce buffer.
 */

/** Segments up to this many words are copied by a loop: cheaper than making a subarray view. */
const SHORT_SEGMENT = 16;
/** Bytes of the bounce buffer: misaligned chunks are realigned this many bytes at a time. */
const BOUNCE_BYTES = 64 * 1024;
let bounce: Uint8Array | null = null;

export class LayoutScatter implements RecvScatter {
  readonly length: number;
  /** A type error at match: the message is dropped. */
  private dropped = false;
  /** The word size the type and the user's buffer allow (chunks may lower it). */
  private readonly typeWord: 1 | 2 | 4 | 8;
  /** Packed start of every segment of one instance (only for maps of unequal segments). */
  private segStart: Float64Array | null = null;
  // The cursor: the packed position `pos` is byte `inSeg` of segment `seg` of instance `inst`.
  private pos = 0;
  private inst = 0;
  private seg = 0;
  private inSeg = 0;

  constructor(
    private readonly buf: BufferLike,
    private readonly type: Datatype,
    count: number,
    /** The receive's own signature check (`signatureMismatch` of the layout). */
    private readonly check: (kind: number, length: number) => MpiError | null,
  ) {
    this.length = count * type.size;
    this.typeWord = wordSize(type, buf.byteOffset, 0);
  }

  matched(kind: number, length: number): MpiError | null {
    const err = this.check(kind, length);
    this.dropped = err !== null;
    return err;
  }

  run(at: number, min: number, max: number): Uint8Array | null {
    if (this.dropped || at >= this.length) return null;
    this.seek(at);
    const segLen = this.type.map.segLen[this.seg]!;
    const n = Math.min(segLen - this.inSeg, max, this.length - at);
    if (n < min || n <= 0) return null;
    return new Uint8Array(this.buf.buffer, this.address(), n);
  }

  write(src: Uint8Array, at: number): void {
    let n = Math.min(src.byteLength, this.length - at);
    if (this.dropped || n <= 0) return;
    let w = this.typeWord;
    // The chunk's address must line up with its packed offset in words of w bytes.
    while (w > 1 && ((src.byteOffset - at) & (w - 1)) !== 0) w = (w >> 1) as 1 | 2 | 4;
    if (w < this.typeWord) {
      if (n >= 64) this.writeRealigned(src, at, n);
      else {
        this.seek(at);
        this.copyAcross(src.buffer, src.byteOffset, n);
      }
      return;
    }
    this.seek(at);
    let from = src.byteOffset;
    // Head and tail bytes off a word boundary lie inside one word of one segment.
    const head = Math.min(n, (w - (at & (w - 1))) & (w - 1));
    if (head > 0) {
      this.copyBytes(src.buffer, from, head);
      from += head;
      n -= head;
    }
    const words = Math.floor(n / w);
    if (words > 0) this.copyWords(src.buffer, from, words, w);
    const tail = n - words * w;
    if (tail > 0) this.copyBytes(src.buffer, from + words * w, tail);
  }

  /** Copies a chunk that does not line up through the aligned bounce buffer, a piece at a time. */
  private writeRealigned(src: Uint8Array, at: number, n: number): void {
    if (bounce === null) bounce = new Uint8Array(BOUNCE_BYTES + 8);
    const b = bounce;
    for (let done = 0; done < n; ) {
      const piece = Math.min(n - done, BOUNCE_BYTES);
      const p = at + done;
      const into = b.subarray(p & 7, (p & 7) + piece);
      into.set(src.subarray(done, done + piece));
      this.write(into, p);
      done += piece;
    }
  }

  /** Byte address in the user's buffer of the cursor. */
  private address(): number {
    const t = this.type;
    return this.buf.byteOffset + this.inst * t.extent + t.map.segDisp[this.seg]! + this.inSeg;
  }

  /** Moves the cursor to packed position `at` (< length). */
  private seek(at: number): void {
    if (at === this.pos) return;
    const { size, map } = this.type;
    const segLen = map.segLen;
    if (at > this.pos && at - this.pos < segLen[this.seg]! - this.inSeg) {
      this.inSeg += at - this.pos;
      this.pos = at;
      return;
    }
    const inst = Math.floor(at / size);
    let r = at - inst * size;
    const uniform = map.words(this.typeWord).uniform * this.typeWord;
    let seg: number;
    if (uniform !== 0) {
      seg = Math.floor(r / uniform);
      r -= seg * uniform;
    } else {
      const starts = this.starts();
      let lo = 0;
      let hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid]! <= r) lo = mid;
        else hi = mid - 1;
      }
      seg = lo;
      r -= starts[lo]!;
    }
    this.inst = inst;
    this.seg = seg;
    this.inSeg = r;
    this.pos = at;
  }

  private starts(): Float64Array {
    if (this.segStart === null) {
      const segLen = this.type.map.segLen;
      const s = new Float64Array(segLen.length);
      for (let i = 1; i < segLen.length; i++) s[i] = s[i - 1]! + segLen[i - 1]!;
      this.segStart = s;
    }
    return this.segStart;
  }

  /** Advances the cursor by `n` bytes that end inside or at the end of the current segment. */
  private advanceInSegment(n: number): void {
    this.pos += n;
    this.inSeg += n;
    if (this.inSeg === this.type.map.segLen[this.seg]!) this.nextSegment();
  }

  private nextSegment(): void {
    this.inSeg = 0;
    if (++this.seg === this.type.map.segLen.length) {
      this.seg = 0;
      this.inst++;
    }
  }

  /** Copies `n` bytes from `memory` at byte `from` along the type map, segment by segment. */
  private copyAcross(memory: ArrayBufferLike, from: number, n: number): void {
    const segLen = this.type.map.segLen;
    while (n > 0) {
      const k = Math.min(n, segLen[this.seg]! - this.inSeg);
      this.copyBytes(memory, from, k);
      from += k;
      n -= k;
    }
  }

  /** Copies `n` bytes (inside the current segment) from `memory` at byte `from`. */
  private copyBytes(memory: ArrayBufferLike, from: number, n: number): void {
    const dst = new Uint8Array(this.buf.buffer, this.address(), n);
    dst.set(new Uint8Array(memory, from, n));
    this.advanceInSegment(n);
  }

  /**
   * Copies `count` words of `w` bytes from `memory` at byte `from` (a multiple of `w`) along the
   * type map from the cursor (at a word boundary), with the loops of `unpackFrom`.
   */
  private copyWords(memory: ArrayBufferLike, from: number, count: number, w: 1 | 2 | 4 | 8): void {
    const src = wordsOf(memory, w);
    const dst = wordsOf(this.buf.buffer, w);
    const { disp, len, uniform, step } = this.type.map.words(w);
    const segs = disp.length;
    const ext = (this.type.extent / w) | 0;
    const origin = (this.buf.byteOffset / w) | 0;
    let o = (from / w) | 0;
    let left = count;
    let inst = this.inst;
    let seg = this.seg;
    let inSeg = (this.inSeg / w) | 0;
    let base = (origin + inst * ext) | 0;
    while (left > 0) {
      if (inSeg === 0 && uniform === 1) {
        // Whole one-word segments (a column): the tight loops of unpackFrom.
        const m = Math.min(left, segs - seg);
        if (step !== 0) {
          let at = (base + disp[seg]!) | 0;
          for (let j = 0; j < m; j++, at += step) dst[at] = src[o++]!;
        } else {
          for (let j = seg; j < seg + m; j++) dst[base + disp[j]!] = src[o++]!;
        }
        seg += m;
        left -= m;
      } else {
        const d = base + disp[seg]! + inSeg;
        const n = Math.min(len[seg]! - inSeg, left);
        if (n <= SHORT_SEGMENT) {
          for (let i = 0; i < n; i++) dst[d + i] = src[o + i]!;
        } else {
          dst.set(src.subarray(o, o + n), d);
        }
        o += n;
        left -= n;
        inSeg += n;
        if (inSeg < len[seg]!) break; // the chunk ends inside this segment
        inSeg = 0;
        seg++;
      }
      if (seg === segs) {
        seg = 0;
        inst++;
        base = (base + ext) | 0;
      }
    }
    this.inst = inst;
    this.seg = seg;
    this.inSeg = inSeg * w;
    this.pos += count * w;
  }
}
