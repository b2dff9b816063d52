import { endianness } from 'node:os';
import type { MessageHeader, RpiRequest } from '@ssi/mpi';
import { KIND_SHIFT } from '@ssi/mpi';

/** Payloads up to this many bytes are copied byte by byte (cheaper than a `set` call). */
const SMALL_COPY = 64;

/**
 * The 32-byte envelope of `@ssi/mpi` (the layout `writeEnvelope` writes: little-endian words
 * length, tag, flags | kind << 16, rank, cid, seq, sid, rid) read and written as words, in place
 * in shared memory: the fast paths' way to an envelope without a Buffer per message and its
 * checked byte accessors. Records start 8-aligned in the segment, so an envelope is whole words.
 * Word access matches the wire only on a little-endian machine (`usable`); elsewhere the fast
 * paths are off and the usual ones (byte accessors) run.
 */
export class WireWords {
  readonly usable = endianness() === 'LE';
  private readonly u32: Uint32Array<ArrayBufferLike>;
  private readonly i32: Int32Array<ArrayBufferLike>;
  private readonly u8: Uint8Array<ArrayBufferLike>;

  /** Over `buffer`, the segment's memory (every postbox view is one of its views). */
  constructor(buffer: ArrayBufferLike) {
    const words = buffer.byteLength >>> 2;
    this.u32 = new Uint32Array(buffer, 0, words);
    this.i32 = new Int32Array(buffer, 0, words);
    this.u8 = new Uint8Array(buffer);
  }

  /** The index of the word `view` (a view of the segment) starts at. */
  at(view: Uint8Array): number {
    return view.byteOffset >>> 2;
  }

  /** The length word of the envelope at word `w`. */
  length(w: number): number {
    return this.u32[w]!;
  }

  /** The flags word (protocol bits and data kind) of the envelope at word `w`. */
  flags(w: number): number {
    return this.u32[w + 2]!;
  }

  /** Fills `h` from the envelope at word `w` (what matching reads). */
  readHeader(w: number, h: MessageHeader): void {
    const u32 = this.u32;
    h.length = u32[w]!;
    h.tag = this.i32[w + 1]!;
    h.kind = u32[w + 2]! >>> KIND_SHIFT;
    h.rank = this.i32[w + 3]!;
    h.cid = u32[w + 4]!;
    h.seq = u32[w + 5]!;
  }

  /** Writes the envelope of the send `req` (its buffer's length, `flags` with its kind) at `w`. */
  writeSend(w: number, req: RpiRequest, flags: number): void {
    const u32 = this.u32;
    u32[w] = req.buf!.byteLength;
    this.i32[w + 1] = req.tag;
    u32[w + 2] = (flags | (req.kind << KIND_SHIFT)) >>> 0;
    this.i32[w + 3] = req.myRank;
    u32[w + 4] = req.cid >>> 0;
    u32[w + 5] = req.seq >>> 0;
    u32[w + 6] = req.id >>> 0;
    u32[w + 7] = 0;
  }

  /** Copies `n` bytes from byte `at` of the buffer into `into`. */
  copyOut(at: number, into: Uint8Array, n: number): void {
    const u8 = this.u8;
    if (n <= SMALL_COPY) for (let i = 0; i < n; i++) into[i] = u8[at + i]!;
    else into.set(u8.subarray(at, at + n));
  }

  /** Copies `src` to byte `at` of the buffer. */
  copyIn(at: number, src: Uint8Array): void {
    const u8 = this.u8;
    const n = src.byteLength;
    if (n <= SMALL_COPY) for (let i = 0; i < n; i++) u8[at + i] = src[i]!;
    else u8.set(src, at);
  }
}
