import type { Doorbells } from './doorbells';
import type { EndpointStatus } from './endpoint-status';
import { postboxOffset } from './layout';
import type { PoolPath } from './pool-path';
import { ANY, type Message, type Receives } from './receives';
import { KIND_CHUNK, KIND_INLINE, KIND_MASK } from './record-kinds';
import { SpscRing } from './ring';
import type { ShmSegment } from './segment';

/**
 * A producer found `ring` full: announce that it waits for room, then look again (Dekker with the
 * consumer, which frees room, then reads the flag and rings). True when there is room now.
 */
export function roomOrWait(ring: SpscRing, payload: number): boolean {
  ring.setProducerWaiting(1);
  if (ring.canWrite(payload)) {
    ring.setProducerWaiting(0);
    return true;
  }
  return false;
}

/**
 * The postbox path: one single-producer ring per ordered pair of processes (`ring.ts`), which
 * carries every record between them, in order: whole messages up to `shortLimit` (one copy in, one
 * copy out, or none with `claim` / `peek`), and the descriptors of large messages' chunks, handed to
 * the pool path. A whole message may skip the receive queues (`readWhole`, `peekFrom`,
 * `peekWhole`) only while nothing of its sender is kept or in progress, so per-sender order holds.
 */
export class Postboxes {
  /** Our postbox to each peer (null at our own index). */
  private readonly out: (SpscRing | null)[] = [];
  /** Each peer's postbox to us (null at our own index). */
  private readonly inb: (SpscRing | null)[] = [];

  private readonly index: number;
  private readonly bells: Doorbells;
  private readonly receives: Receives;
  private readonly large: PoolPath;
  private readonly status: EndpointStatus;

  constructor(
    seg: ShmSegment,
    parts: { bells: Doorbells; receives: Receives; large: PoolPath; status: EndpointStatus },
  ) {
    const index = seg.index;
    this.index = index;
    this.bells = parts.bells;
    this.receives = parts.receives;
    this.large = parts.large;
    this.status = parts.status;
    const l = seg.layout;
    for (let q = 0; q < l.nprocs; q++) {
      if (q === index) {
        this.out.push(null);
        this.inb.push(null);
        continue;
      }
      const o = postboxOffset(l, index, q);
      const i = postboxOffset(l, q, index);
      this.out.push(new SpscRing(seg.buffer, o, o + l.cacheLine, l.ringCapacity));
      this.inb.push(new SpscRing(seg.buffer, i, i + l.cacheLine, l.ringCapacity));
    }
  }

  // --- sending ---------------------------------------------------------------------------------

  /** Our postbox to `to` (for writers of other record kinds: the pool path's chunks). */
  outTo(to: number): SpscRing {
    return this.out[to]!;
  }

  /** Write a whole message (`data` then `more`) to `to` if it fits now; wakes `to` if it sleeps. */
  write(to: number, data: Uint8Array, more?: Uint8Array): boolean {
    if (!this.out[to]!.tryWrite(KIND_INLINE, data, more)) return false;
    this.bells.notifyMessage(to);
    return true;
  }

  /** Room for a whole message of `length` bytes to `to`, written in place; null: `write` it. */
  claim(to: number, length: number): Uint8Array | null {
    return this.out[to]!.claim(length);
  }

  /** Publish the message written into `claim`'s view; wakes `to` if it sleeps. */
  commit(to: number): void {
    this.out[to]!.commit(KIND_INLINE);
    this.bells.notifyMessage(to);
  }

  // --- receiving -------------------------------------------------------------------------------

  /** Is a record waiting in the postbox from `from` (ANY: from anyone)? */
  incoming(from: number): boolean {
    if (from !== ANY) return !this.inb[from]!.isEmpty();
    for (let q = 0; q < this.inb.length; q++) {
      const r = this.inb[q];
      if (r && !r.isEmpty()) return true;
    }
    return false;
  }

  /** Is a record waiting in any postbox to us but the one from `from`? */
  incomingBesides(from: number): boolean {
    for (let q = 0; q < this.inb.length; q++) {
      const r = this.inb[q];
      if (q !== from && r && !r.isEmpty()) return true;
    }
    return false;
  }

  /**
   * The next record from `from` as a view of the postbox, held there (see `ShmEndpoint.peekFrom`);
   * null: nothing came; `SpscRing.ELSEWHERE`: not to be taken in place.
   */
  peekFrom(from: number): Uint8Array | null {
    // heldBack written out: a spinning caller calls this in a loop, so it is kept small to inline
    const r = this.receives;
    if (r.waiting() || this.large.inProgressFrom(from) || r.keeps(from)) return SpscRing.ELSEWHERE;
    return this.inb[from]!.peek(KIND_INLINE);
  }

  /**
   * The next record from `q` as a view of the postbox, held there, when it is a whole message
   * that may be taken in place; null otherwise (none, held back, or not in one piece).
   */
  peekWhole(q: number): Uint8Array | null {
    const ring = this.inb[q];
    if (!ring || this.heldBack(q)) return null;
    const view = ring.peek(KIND_INLINE);
    return view === SpscRing.ELSEWHERE ? null : view;
  }

  /** Leave the held record from `from` in its postbox, no longer held. */
  unpeek(from: number): void {
    this.inb[from]!.unpeek();
  }

  /** Remove the held record from `from`; ring `from` if it waits for the room. */
  skip(from: number): void {
    const ring = this.inb[from]!;
    ring.skip();
    if (ring.takeProducerWaiting()) this.bells.ring(from);
  }

  /**
   * The common case, without queues: the next record from `from` (ANY: the first peer that has
   * one) is a whole message and nothing of its sender is kept or in progress. Read it straight
   * into `into` (when it fits).
   */
  readWhole(from: number, into: Uint8Array | undefined): Message | undefined {
    if (from === ANY) {
      for (let q = 0; q < this.inb.length; q++) {
        if (q === this.index) continue;
        const m = this.readWhole(q, into);
        if (m) return m;
      }
      return undefined;
    }
    if (this.heldBack(from)) return undefined;
    const ring = this.inb[from]!;
    const meta = ring.peekMeta();
    if (meta < 0 || (meta & KIND_MASK) !== KIND_INLINE) return undefined;
    const data = ring.readPayload(into)!;
    if (ring.takeProducerWaiting()) this.bells.ring(from);
    return { from, data };
  }

  /**
   * Copy every record out of our incoming postboxes: whole messages to the receive queues, chunks
   * to the pool path. Returns whether anything came.
   */
  drain(): boolean {
    let got = false;
    for (let q = 0; q < this.inb.length; q++) {
      const ring = this.inb[q];
      if (!ring) continue;
      let n = 0;
      for (;;) {
        const rec = ring.tryRead();
        if (!rec) break;
        n++;
        const kind = rec.meta & KIND_MASK;
        if (kind === KIND_INLINE) {
          this.receives.deliver({ from: q, data: rec.data });
        } else if (kind === KIND_CHUNK) {
          this.large.receiveChunk(q, rec.meta, rec.data);
        } else {
          throw this.status.corrupt(`unknown record kind ${kind} from ${q}`);
        }
      }
      if (n > 0) {
        got = true;
        if (ring.takeProducerWaiting()) this.bells.ring(q);
      }
    }
    return got;
  }

  /** Something of `from` is kept or in progress: its postbox's next record is not next for us. */
  private heldBack(from: number): boolean {
    return this.large.inProgressFrom(from) || this.receives.keeps(from);
  }

  /** Bytes used in our postbox to `q` and in `q`'s to us, for diagnostics. */
  usedWith(q: number): { outUsed: number; inUsed: number } {
    return { outUsed: this.out[q]!.used(), inUsed: this.inb[q]!.used() };
  }
}
