import { ShmError } from './errors';
import { R, RECORD_HEADER } from './layout';

/**
 * A lock-free single-producer / single-consumer ring of variable-size records: one of LAM's
 * "postboxes" (one per ordered pair of processes). The control line holds `head` (written only by
 * the producer), `tail` (written only by the consumer) and `producerWaiting` (set by a producer that
 * found the ring full, cleared by the consumer that frees space). Data follows in `capacity` bytes.
 *
 * A record is an 8-byte header [u32 length][u32 meta] at an 8-aligned position, then `length`
 * payload bytes padded to 8. The header never wraps (capacity and positions are multiples of 8);
 * the payload may wrap, in which case it is copied in two pieces. `head` and `tail` run over
 * [0, 2 x capacity) so that full (head - tail = capacity) and empty (head = tail) differ without
 * wasting a slot and without requiring a power-of-two capacity.
 *
 * MEMORY ORDERING. The segment is plain memory shared by two processes; all ordering comes from
 * the two control words, accessed only with Atomics (sequentially consistent in JavaScript; V8
 * emits `xchg` for Atomics.store and a plain `mov` for Atomics.load on x86-64, which is TSO, and
 * stlr/ldar on arm64, so each is at least a release store / acquire load at the machine level, and
 * the JIT never moves memory accesses across them: they are effectful operations in TurboFan).
 *
 *  Producer                               Consumer
 *  1. t = Atomics.load(tail)              1. h = Atomics.load(head)         (acquire)
 *  2. if no room: return false            2. if h == tail: empty
 *  3. write header + payload (plain)      3. read header + payload (plain)
 *  4. Atomics.store(head, h')  (release)  4. Atomics.store(tail, t') (release)
 *
 *  - Publication: the consumer reads the bytes of a record only after its load of `head` saw the
 *    store (P4) that followed the writes (P3); release/acquire makes P3 visible before C3.
 *  - Reuse: the producer overwrites bytes only when its load of `tail` (P1) saw the consumer's
 *    store (C4) that followed the consumer's reads (C3) of those bytes, so a slot is never
 *    overwritten while still being read.
 *  - Each control word has exactly one writer, so no read-modify-write is needed; a stale value
 *    read by the other side only makes it see the ring as fuller / emptier than it is (safe).
 *  - The copies (TypedArray.prototype.set) are calls into a C++ memmove for an ArrayBuffer; for a
 *    SharedArrayBuffer V8 uses relaxed word copies. Either way they are bracketed by the Atomics
 *    above, which is all the argument needs.
 * Sleep/wake (producerWaiting, doorbells) is a Dekker pattern on separate words, documented in
 * doorbells.ts.
 */
export class SpscRing {
  /** `peek`'s answer for a record that is there but not to be taken in place. */
  static readonly ELSEWHERE = new Uint8Array(0);
  readonly capacity: number;
  /** Largest payload a single record can carry. */
  readonly maxPayload: number;
  private readonly ctrl: Int32Array;
  private readonly data: Uint8Array;
  private readonly words: Uint32Array;
  private readonly twice: number;
  /** Bytes of the record `peek` handed out, not yet removed (`skip`). */
  private peeked = 0;
  /** Bytes of the record `claim` handed out, not yet published (`commit`), and its payload's. */
  private claimed = 0;
  private claimedLength = 0;

  /**
   * @param buffer the memory (a segment's buffer, or any ArrayBuffer/SharedArrayBuffer in tests)
   * @param ctrlOffset byte offset of the control line (3 words used), a multiple of 4
   * @param dataOffset byte offset of the data area, a multiple of 8
   * @param capacity size of the data area, a multiple of 8, at least 16
   */
  constructor(buffer: ArrayBufferLike, ctrlOffset: number, dataOffset: number, capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 16 || capacity % 8 !== 0 || capacity > 2 ** 30) {
      throw new ShmError(
        'BAD_ARGS',
        `ring capacity must be a multiple of 8 from 16 to 2^30 bytes, got ${capacity}`,
      );
    }
    if (ctrlOffset % 4 !== 0 || dataOffset % 8 !== 0) {
      throw new ShmError(
        'BAD_ARGS',
        `ring offsets must be aligned (control ${ctrlOffset} to 4, data ${dataOffset} to 8)`,
      );
    }
    if (ctrlOffset + 12 > buffer.byteLength || dataOffset + capacity > buffer.byteLength) {
      throw new ShmError(
        'BAD_ARGS',
        `ring (control at ${ctrlOffset}, ${capacity} bytes at ${dataOffset}) does not fit in ${buffer.byteLength} bytes`,
      );
    }
    this.capacity = capacity;
    this.maxPayload = capacity - RECORD_HEADER;
    this.twice = 2 * capacity;
    this.ctrl = new Int32Array(buffer, ctrlOffset, 3);
    this.data = new Uint8Array(buffer, dataOffset, capacity);
    this.words = new Uint32Array(buffer, dataOffset, capacity / 4);
  }

  /** Bytes a record with `payloadBytes` of payload occupies. */
  static recordBytes(payloadBytes: number): number {
    return RECORD_HEADER + ((payloadBytes + 7) & ~7);
  }

  /** Bytes currently used (as seen now; the other side may change it at any moment). */
  used(): number {
    const head = Atomics.load(this.ctrl, R.head);
    const tail = Atomics.load(this.ctrl, R.tail);
    return (head - tail + this.twice) % this.twice;
  }

  isEmpty(): boolean {
    return Atomics.load(this.ctrl, R.head) === Atomics.load(this.ctrl, R.tail);
  }

  /** Producer: would a record of `payloadBytes` fit now? */
  canWrite(payloadBytes: number): boolean {
    return this.capacity - this.used() >= SpscRing.recordBytes(payloadBytes);
  }

  /**
   * Producer: append one record (payload = `a` followed by `b`, if given). Returns false, writing
   * nothing, when there is not enough room now. Throws when the record could never fit.
   */
  tryWrite(meta: number, a: Uint8Array, b?: Uint8Array): boolean {
    const len = a.length + (b ? b.length : 0);
    if (len > this.maxPayload) {
      throw new ShmError(
        'BAD_ARGS',
        `a ${len}-byte payload does not fit in a postbox of ${this.capacity} bytes (at most ${this.maxPayload}); send it through the pool`,
      );
    }
    const need = RECORD_HEADER + ((len + 7) & ~7);
    const head = this.ctrl[R.head]!; // written only by us
    const tail = Atomics.load(this.ctrl, R.tail); // acquire: the consumer is done with those bytes
    if (this.capacity - ((head - tail + this.twice) % this.twice) < need) return false;
    const cap = this.capacity;
    const pos = head >= cap ? head - cap : head;
    this.words[pos >> 2] = len;
    this.words[(pos >> 2) + 1] = meta >>> 0;
    let p = pos + RECORD_HEADER;
    if (p === cap) p = 0;
    p = this.put(p, a);
    if (b) this.put(p, b);
    Atomics.store(this.ctrl, R.head, (head + need) % this.twice); // release: publish the record
    return true;
  }

  /**
   * Producer: room for one record of `payloadBytes`, as a view of the ring where its payload
   * goes (the caller writes it in place, no copy), when there is room now and the payload would
   * not wrap the ring's end; else null (`tryWrite` then). Nothing is published until `commit()`;
   * another claim before it claims the same bytes again.
   */
  claim(payloadBytes: number): Uint8Array | null {
    const need = RECORD_HEADER + ((payloadBytes + 7) & ~7);
    const head = this.ctrl[R.head]!; // written only by us
    const tail = Atomics.load(this.ctrl, R.tail); // acquire: the consumer is done with those bytes
    if (this.capacity - ((head - tail + this.twice) % this.twice) < need) return null;
    const cap = this.capacity;
    const pos = head >= cap ? head - cap : head;
    const p = pos + RECORD_HEADER;
    if (p + payloadBytes > cap) return null;
    this.claimed = need;
    this.claimedLength = payloadBytes;
    return this.data.subarray(p, p + payloadBytes);
  }

  /** Producer: publishes the record `claim` handed out, with meta word `meta`. */
  commit(meta: number): void {
    if (this.claimed === 0) return;
    const head = this.ctrl[R.head]!;
    const pos = head >= this.capacity ? head - this.capacity : head;
    this.words[pos >> 2] = this.claimedLength;
    this.words[(pos >> 2) + 1] = meta >>> 0;
    Atomics.store(this.ctrl, R.head, (head + this.claimed) % this.twice); // release: publish
    this.claimed = 0;
  }

  private put(p: number, src: Uint8Array): number {
    const cap = this.capacity;
    const first = Math.min(src.length, cap - p);
    if (first === src.length) {
      this.data.set(src, p);
    } else {
      this.data.set(src.subarray(0, first), p);
      this.data.set(src.subarray(first), 0);
    }
    const q = p + src.length;
    return q >= cap ? q - cap : q;
  }

  /** Consumer: the meta word of the next record, or -1 when the ring is empty. */
  peekMeta(): number {
    const tail = this.ctrl[R.tail]!;
    if (Atomics.load(this.ctrl, R.head) === tail) return -1;
    const pos = tail >= this.capacity ? tail - this.capacity : tail;
    return this.words[(pos >> 2) + 1]!;
  }

  /**
   * Consumer: remove the next record and return its meta word and a private copy of its payload,
   * or null when the ring is empty.
   */
  tryRead(): { meta: number; data: Uint8Array } | null {
    const meta = this.peekMeta();
    if (meta < 0) return null;
    return { meta, data: this.readPayload()! };
  }

  /**
   * Consumer: remove the next record and return its payload, copied into `into` (a view of it is
   * returned) when it fits, else into a new array; null when the ring is empty. peekMeta() tells
   * the record's meta word beforehand.
   */
  readPayload(into?: Uint8Array): Uint8Array | null {
    if (this.peeked !== 0) throw this.stillPeeked();
    const tail = this.ctrl[R.tail]!; // written only by us
    const head = Atomics.load(this.ctrl, R.head); // acquire: the record's bytes are visible
    if (head === tail) return null;
    const cap = this.capacity;
    const pos = tail >= cap ? tail - cap : tail;
    const len = this.words[pos >> 2]!;
    const avail = (head - tail + this.twice) % this.twice;
    if (len > this.maxPayload || RECORD_HEADER + ((len + 7) & ~7) > avail) {
      throw new ShmError(
        'BROKEN',
        `postbox record of ${len} bytes at ${pos} exceeds what was published (${avail} bytes): the segment is corrupted; end the job`,
      );
    }
    const out = into && into.length >= len ? into.subarray(0, len) : new Uint8Array(len);
    let p = pos + RECORD_HEADER;
    if (p === cap) p = 0;
    const first = Math.min(len, cap - p);
    out.set(this.data.subarray(p, p + first), 0);
    if (first < len) out.set(this.data.subarray(0, len - first), first);
    // release: our reads of the slot are complete before the producer may reuse it
    Atomics.store(this.ctrl, R.tail, (tail + RECORD_HEADER + ((len + 7) & ~7)) % this.twice);
    return out;
  }

  /**
   * Consumer: the payload of the next record as a view of the ring itself (no copy), when the
   * record's meta word is `meta` and its payload does not wrap the ring's end; null when the ring
   * is empty; `SpscRing.ELSEWHERE` (compare by identity) when a record is there but not one to
   * take so (another kind, or wrapped: `readPayload` then). The record stays in the ring, and
   * its bytes cannot change, until `skip()` removes it.
   */
  peek(meta: number): Uint8Array | null {
    const tail = this.ctrl[R.tail]!; // written only by us
    const head = Atomics.load(this.ctrl, R.head); // acquire: the record's bytes are visible
    if (head === tail) return null;
    const cap = this.capacity;
    const pos = tail >= cap ? tail - cap : tail;
    if (this.words[(pos >> 2) + 1] !== meta >>> 0) return SpscRing.ELSEWHERE;
    const len = this.words[pos >> 2]!;
    const need = RECORD_HEADER + ((len + 7) & ~7);
    if (len > this.maxPayload || need > (head - tail + this.twice) % this.twice) {
      throw new ShmError(
        'BROKEN',
        `postbox record of ${len} bytes at ${pos} exceeds what was published: the segment is corrupted; end the job`,
      );
    }
    let p = pos + RECORD_HEADER;
    if (p === cap) p = 0;
    if (p + len > cap) return SpscRing.ELSEWHERE;
    this.peeked = need;
    return this.data.subarray(p, p + len);
  }

  /** Consumer: leaves the record `peek` returned in the ring, no longer held (read it later). */
  unpeek(): void {
    this.peeked = 0;
  }

  /** Consumer: removes the record `peek` returned (its bytes may be overwritten from now on). */
  skip(): void {
    if (this.peeked === 0) return;
    const tail = this.ctrl[R.tail]!;
    // release: our reads of the slot are complete before the producer may reuse it
    Atomics.store(this.ctrl, R.tail, (tail + this.peeked) % this.twice);
    this.peeked = 0;
  }

  /**
   * A read while a peeked record is still in the ring would move `tail` under it, and `skip` would
   * then land inside a record: refuse it (a caller's bug, not the peer's).
   */
  private stillPeeked(): ShmError {
    return new ShmError(
      'BAD_ARGS',
      'a postbox read while the record peek() returned is still held: skip() it first',
    );
  }

  /** Producer: announce (1) or withdraw (0) that we wait for room. See doorbells.ts. */
  setProducerWaiting(v: 0 | 1): void {
    Atomics.store(this.ctrl, R.producerWaiting, v);
  }

  /** Consumer: was a producer waiting for room? Clears the flag. */
  takeProducerWaiting(): boolean {
    if (Atomics.load(this.ctrl, R.producerWaiting) === 0) return false;
    return Atomics.exchange(this.ctrl, R.producerWaiting, 0) !== 0;
  }
}
