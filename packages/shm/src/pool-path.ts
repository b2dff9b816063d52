import type { Doorbells } from './doorbells';
import type { EndpointOptions, EndpointSettings } from './endpoint-options';
import type { EndpointStatus } from './endpoint-status';
import type { SharedPool } from './pool';
import { roomOrWait } from './postboxes';
import type { Receiver, Receives } from './receives';
import { fail, settle } from './receives';
import { FIRST, KIND_CHUNK, LAST } from './record-kinds';
import type { SpscRing } from './ring';
import type { ShmSegment } from './segment';

/**
 * A chunk record's payload, six u32 words: the chunk's offset in the segment (lo, hi), its length,
 * the whole message's length (lo, hi), unused. Offsets and totals may pass 2^32 in a large pool.
 */
const DESC_BYTES = 24;

/** What of a large message a sender has placed in the pool so far. */
export interface LargeSend {
  readonly data: Uint8Array;
  /** Bytes of `data` already placed. */
  sent: number;
}

/** Why `writeChunks` stopped before the whole message was placed. */
export type ChunkStop = 'room' | 'pool' | 'lock';

/** A large message being received: its buffer and how much of it the chunks filled. */
interface Partial {
  buf: Uint8Array;
  filled: number;
  /** The receiver this message was matched to when its first chunk arrived. */
  receiver: Receiver | undefined;
}

/**
 * Large messages (past the postbox's `shortLimit`) through the shared pool. The sender cuts a
 * message into chunks of at most `chunkSize`, copies each into blocks it allocates under the pool
 * lock, and writes the chunk's descriptor as a record into the pair's postbox, so the message keeps
 * its place in the pair's order. The receiver copies each chunk into the message's buffer, chosen
 * when the first chunk arrives (a posted receive's `into`, the `intoFor` option's, or a new one),
 * and queues the chunk's blocks to be freed: under one lock acquisition for many chunks, so the
 * lock is taken once per drain, not once per chunk.
 */
export class PoolPath {
  /** The message in progress from each peer. */
  private readonly partial: (Partial | null)[] = [];
  /** Messages in progress (non-null entries of `partial`). */
  private partials = 0;
  /** Offsets of chunks copied out, waiting to be freed. */
  private pendingFrees: number[] = [];
  /** The descriptor being written, reused for every chunk sent. */
  private readonly desc = new Uint32Array(DESC_BYTES / 4);
  private readonly descBytes = new Uint8Array(this.desc.buffer);

  private readonly chunkSize: number;
  private readonly intoFor: ((from: number, length: number) => Uint8Array | undefined) | undefined;
  private readonly receives: Receives;
  private readonly bells: Doorbells;
  private readonly status: EndpointStatus;

  constructor(
    private readonly seg: ShmSegment,
    /** Null when the segment has no pool (then no message may pass `shortLimit`). */
    readonly pool: SharedPool | null,
    opts: Pick<EndpointSettings, 'chunkSize'> & Pick<EndpointOptions, 'intoFor'>,
    parts: { receives: Receives; bells: Doorbells; status: EndpointStatus },
  ) {
    this.chunkSize = opts.chunkSize;
    this.intoFor = opts.intoFor;
    this.receives = parts.receives;
    this.bells = parts.bells;
    this.status = parts.status;
    for (let q = 0; q < seg.layout.nprocs; q++) this.partial.push(null);
  }

  // --- sending ---------------------------------------------------------------------------------

  /**
   * Places what is left of `s` into the pool, chunk after chunk, each announced by a record in
   * `ring` (our postbox to `to`), without waiting: synchronous, so no two callers interleave on one
   * send. Returns null once all of it is placed, else why it stopped (no postbox room, no pool
   * room, or the pool lock held by another process); `s.sent` tells how far it got.
   */
  writeChunks(to: number, ring: SpscRing, s: LargeSend): ChunkStop | null {
    const pool = this.pool!;
    const u8 = this.seg.u8;
    const len = s.data.length;
    while (s.sent < len) {
      if (!ring.canWrite(DESC_BYTES) && !roomOrWait(ring, DESC_BYTES)) return 'room';
      const n = Math.min(len - s.sent, this.chunkSize);
      const placed = this.allocChunk(pool, n);
      if (placed === null) return 'lock';
      if (placed.off === -1) return 'pool';
      const { off, bytes } = placed;
      u8.set(s.data.subarray(s.sent, s.sent + bytes), off);
      this.describe(off, bytes, len);
      const flags = (s.sent === 0 ? FIRST : 0) | (s.sent + bytes === len ? LAST : 0);
      if (!ring.tryWrite(KIND_CHUNK | flags, this.descBytes)) {
        throw this.status.corrupt('postbox room vanished while we are its only producer');
      }
      s.sent += bytes;
      this.bells.notifyMessage(to);
    }
    return null;
  }

  /**
   * Pool blocks for a chunk of up to `n` bytes, halving down to one block when the pool is too
   * fragmented for `n`; null when the lock is held elsewhere, offset -1 when the pool is full.
   * A full pool is announced (waitPool) and tried once more, so a free in between is not missed
   * (Dekker, see doorbells.ts).
   */
  private allocChunk(pool: SharedPool, n: number): { off: number; bytes: number } | null {
    let off = pool.tryAlloc(n);
    while (off === -1 && n > pool.blockSize) {
      n = Math.max(pool.blockSize, n >>> 1);
      off = pool.tryAlloc(n);
    }
    if (off === -1) {
      this.bells.setWaitingForPool(1);
      off = pool.tryAlloc(n);
      if (off !== -1) this.bells.setWaitingForPool(0);
    }
    return off === null ? null : { off, bytes: n };
  }

  private describe(off: number, bytes: number, total: number): void {
    const d = this.desc;
    d[0] = off % 2 ** 32;
    d[1] = Math.floor(off / 2 ** 32);
    d[2] = bytes;
    d[3] = total % 2 ** 32;
    d[4] = Math.floor(total / 2 ** 32);
  }

  // --- receiving -------------------------------------------------------------------------------

  /** Copies the chunk a record from `q` describes into its message; settles it when complete. */
  receiveChunk(q: number, meta: number, payload: Uint8Array): void {
    const u8 = this.seg.u8;
    const d = new Uint32Array(payload.buffer, payload.byteOffset, DESC_BYTES / 4);
    const off = d[0]! + d[1]! * 2 ** 32;
    const len = d[2]!;
    let p = this.partial[q];
    if (meta & FIRST) {
      if (p) throw this.status.corrupt(`a new large message from ${q} began inside another`);
      p = this.startLarge(q, d[3]! + d[4]! * 2 ** 32);
      this.partial[q] = p;
      this.partials++;
    }
    if (!p || p.filled + len > p.buf.length || off + len > u8.length) {
      throw this.status.corrupt(`a chunk from ${q} does not fit its message`);
    }
    p.buf.set(u8.subarray(off, off + len), p.filled);
    p.filled += len;
    this.pendingFrees.push(off);
    if (meta & LAST) {
      if (p.filled !== p.buf.length)
        throw this.status.corrupt(`a large message from ${q} is short`);
      this.partial[q] = null;
      this.partials--;
      if (p.receiver) settle(p.receiver, { from: q, data: p.buf });
      else this.receives.deliver({ from: q, data: p.buf });
    }
  }

  /**
   * The first chunk of a large message: match it to a posted receive now (so it is copied
   * straight into that receive's buffer), else ask `intoFor`, or allocate a buffer for it.
   */
  private startLarge(from: number, total: number): Partial {
    const r = this.receives.claimFor(from);
    const into = r?.into ?? this.intoFor?.(from, total);
    const buf =
      into && into.length >= total ? into.subarray(0, total) : Buffer.allocUnsafeSlow(total);
    return { buf, filled: 0, receiver: r };
  }

  /** Is a large message from `from` in progress (so its later records are not whole messages)? */
  inProgressFrom(from: number): boolean {
    return this.partial[from] !== null;
  }

  /** Is any large message in progress? */
  inProgress(): boolean {
    return this.partials > 0;
  }

  /** How much of the message in progress from `q` arrived, for diagnostics. */
  progressOf(q: number): string | null {
    const p = this.partial[q];
    return p ? `${p.filled}/${p.buf.length}` : null;
  }

  /** Fail the receives matched to messages in progress. */
  failReceivers(err: Error): void {
    for (const p of this.partial) {
      if (p?.receiver) {
        fail(p.receiver, err);
        p.receiver = undefined;
      }
    }
  }

  // --- freeing ---------------------------------------------------------------------------------

  /** Are chunks copied out and not yet freed? */
  hasFrees(): boolean {
    return this.pendingFrees.length > 0;
  }

  /** Chunks waiting to be freed, for diagnostics. */
  freesPending(): number {
    return this.pendingFrees.length;
  }

  /**
   * Free the drained chunks if the lock is free right now; false when it was held (the caller
   * leaves them to the progress loop, which waits for the lock).
   */
  freeNow(): boolean {
    const pool = this.pool!;
    if (!pool.lock.tryAcquire()) return false;
    const offs = this.pendingFrees;
    this.pendingFrees = [];
    try {
      pool.freeLockedMany(offs);
    } finally {
      pool.lock.release();
    }
    this.bells.wakePoolWaiters();
    return true;
  }

  /**
   * Free the drained chunks, waiting for the lock. The caller wakes the pool's waiters after
   * (unless the endpoint closed meanwhile).
   */
  async freeWaiting(): Promise<void> {
    const offs = this.pendingFrees;
    this.pendingFrees = [];
    await this.pool!.free(offs);
  }
}
