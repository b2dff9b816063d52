import type { LargeSend, PoolPath } from './pool-path';
import { type Postboxes, roomOrWait } from './postboxes';

/** A send not yet completely in shared memory. */
interface PendingSend extends LargeSend {
  resolve: () => void;
  reject: (e: Error) => void;
}

/**
 * Sends that could not be written at once (their postbox was full, or they are large messages,
 * which go chunk by chunk as the pool allows), queued per peer in send order. While a peer's queue
 * is not empty, nothing else is written to that peer, so messages leave in the order they were
 * sent.
 */
export class SendQueue {
  private readonly queues: PendingSend[][] = [];
  /** Sends in all queues, so "anything queued?" is one load. */
  private queued = 0;
  /** `advanceNow` stopped at the pool lock, held by another process (the loop waits for it). */
  stoppedAtLock = false;

  constructor(
    nprocs: number,
    private readonly shortLimit: number,
    private readonly boxes: Postboxes,
    private readonly large: PoolPath,
  ) {
    for (let q = 0; q < nprocs; q++) this.queues.push([]);
  }

  /** Is any send queued? */
  any(): boolean {
    return this.queued > 0;
  }

  /** Sends queued to every peer, for diagnostics. */
  queuedCount(): number {
    return this.queued;
  }

  /** Sends to `to` queued (oldest first). */
  queuedTo(to: number): number {
    return this.queues[to]!.length;
  }

  /** Queue `data` for `to`; resolves once all of it is in shared memory. */
  enqueue(to: number, data: Uint8Array): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queues[to]!.push({ data, sent: 0, resolve, reject });
      this.queued++;
    });
  }

  /**
   * Move queued sends forward as far as postbox room, pool space and the pool lock allow, without
   * waiting: synchronous, so the loop and `flushSends` never interleave on one send. Sets
   * `stoppedAtLock` when it stopped at a pool lock held by another process. True when anything
   * moved (a send completed, or a chunk of one was placed).
   */
  advanceNow(): boolean {
    let progressed = false;
    this.stoppedAtLock = false;
    for (let to = 0; to < this.queues.length; to++) {
      const q = this.queues[to]!;
      while (q.length > 0) {
        const s = q[0]!;
        const before = s.sent;
        const done = this.write(to, s);
        if (s.sent > before) progressed = true;
        if (!done) break;
        q.shift();
        this.queued--;
        progressed = true;
        s.resolve();
      }
    }
    return progressed;
  }

  /** Write `s` as far as it goes now; true once all of it is in shared memory. */
  private write(to: number, s: PendingSend): boolean {
    const ring = this.boxes.outTo(to);
    const len = s.data.length;
    if (len > this.shortLimit) {
      const stop = this.large.writeChunks(to, ring, s);
      if (stop === 'lock') this.stoppedAtLock = true;
      return stop === null;
    }
    // a full postbox: announce that we wait for room, unless it freed up meanwhile
    while (!this.boxes.write(to, s.data)) if (!roomOrWait(ring, len)) return false;
    return true;
  }

  /** Reject every queued send (the endpoint failed or closed). */
  rejectAll(err: Error): void {
    for (const q of this.queues) {
      for (const s of q.splice(0)) s.reject(err);
    }
    this.queued = 0;
  }
}
