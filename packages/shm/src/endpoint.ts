import { Doorbells } from './doorbells';
import { type EndpointOptions, endpointSettings, type RecvOptions } from './endpoint-options';
import { EndpointStatus } from './endpoint-status';
import { ShmError } from './errors';
import { P, PROC_CLOSED, procLineOffset } from './layout';
import { type LockOptions, PoolLock } from './lock';
import { PeerWatch } from './peer-watch';
import { SharedPool } from './pool';
import { PoolPath } from './pool-path';
import { Postboxes } from './postboxes';
import { ProgressLoop } from './progress-loop';
import { ANY, type Message, type Receiver, Receives } from './receives';
import type { ShmSegment } from './segment';
import { SendQueue } from './send-queue';

const RESOLVED = Promise.resolve();
/** recv() never holds the event loop longer than this while spinning, even with data flowing. */
const MAX_SYNC_SPIN_NS = 5_000_000n;

/**
 * Messages between the processes of one segment: any size, in order per pair, nothing lost or
 * duplicated. A message up to `shortLimit` bytes travels whole through the postbox of the pair
 * (`postboxes.ts`: one copy in, one copy out); a larger one is cut into chunks placed in the pool
 * (`pool-path.ts`), and the postbox carries each chunk's descriptor, so order is still the
 * postbox's. Sends that cannot be written at once wait in `send-queue.ts`; complete messages meet
 * receives in `receives.ts`; the endpoint's own loop (`progress-loop.ts`) moves both while a
 * caller awaits, and sleeps on a doorbell (`doorbells.ts`, where the sleep/wake protocol is argued)
 * when nothing moves. This class is the face: it checks arguments and composes those parts.
 */
export class ShmEndpoint {
  readonly index: number;
  readonly nprocs: number;
  readonly shortLimit: number;
  readonly pool: SharedPool | null;
  private readonly seg: ShmSegment;
  private readonly status: EndpointStatus;
  private readonly bells: Doorbells;
  private readonly receives: Receives;
  private readonly large: PoolPath;
  private readonly boxes: Postboxes;
  private readonly sends: SendQueue;
  private readonly loop: ProgressLoop;
  private readonly spinNs: bigint;

  constructor(segment: ShmSegment, opts: EndpointOptions = {}) {
    if (segment.isClosed) throw new ShmError('CLOSED', 'the segment is closed');
    this.seg = segment;
    const l = segment.layout;
    this.index = segment.index;
    this.nprocs = l.nprocs;
    this.shortLimit = l.shortLimit;
    const set = endpointSettings(segment, opts);
    this.spinNs = set.spinNs;
    this.pool = l.poolBlocks > 0 ? openPool(segment, opts.lock) : null;
    const status = new EndpointStatus(segment);
    const bells = new Doorbells(segment, this.index);
    const receives = new Receives(l.nprocs);
    const large = new PoolPath(
      segment,
      this.pool,
      { ...set, intoFor: opts.intoFor },
      { receives, bells, status },
    );
    const boxes = new Postboxes(segment, { bells, receives, large, status });
    const sends = new SendQueue(l.nprocs, l.shortLimit, boxes, large);
    const peers = new PeerWatch(segment, set.peerCheckMs, { boxes, large, receives, status });
    const parts = { bells, boxes, large, sends, receives, peers, status };
    this.loop = new ProgressLoop(segment, parts, set.spinNs, set.helperSpinNs, this.failed);
    this.status = status;
    this.bells = bells;
    this.receives = receives;
    this.large = large;
    this.boxes = boxes;
    this.sends = sends;
  }

  /**
   * Send `data` to process `to`. Resolves once the bytes are in shared memory (the caller may
   * then reuse `data`); rejects on a dead peer, a broken segment, or close().
   */
  send(to: number, data: Uint8Array): Promise<void> {
    this.status.checkUsable();
    this.checkPeer(to);
    if (!(data instanceof Uint8Array)) {
      throw new ShmError('BAD_ARGS', 'data must be a Uint8Array (or Buffer)');
    }
    const queued = this.sends.queuedTo(to) > 0;
    if (!queued && data.length <= this.shortLimit && this.boxes.write(to, data)) return RESOLVED;
    if (data.length > this.shortLimit && this.pool === null) {
      throw new ShmError(
        'BAD_ARGS',
        `a ${data.length}-byte message needs the pool, but this segment has none (poolSize 0); its limit is shortLimit = ${this.shortLimit} bytes`,
      );
    }
    const sent = this.sends.enqueue(to, data);
    this.loop.kick();
    return sent;
  }

  /**
   * Send now if it fits in the postbox; false (nothing sent) otherwise. Never queues. With
   * `more`, the message is `data` followed by `more` (a header and a body, written into the
   * postbox without joining them first).
   */
  trySend(to: number, data: Uint8Array, more?: Uint8Array): boolean {
    this.status.checkUsable();
    this.checkPeer(to);
    const length = data.length + (more === undefined ? 0 : more.length);
    if (this.sends.queuedTo(to) > 0 || length > this.shortLimit) return false;
    return this.boxes.write(to, data, more);
  }

  /**
   * Room for a message of `length` bytes to `to` in its postbox, as a view where the caller
   * writes the message in place (no copy); null when `trySend` would not send it now, or the
   * room would wrap the postbox's end (`trySend` copies in two pieces then). Nothing is sent
   * until `commitTo(to)`, which must follow before any other send to `to`.
   */
  claimTo(to: number, length: number): Uint8Array | null {
    this.status.checkUsable();
    this.checkPeer(to);
    if (this.sends.queuedTo(to) > 0 || length > this.shortLimit) return null;
    return this.boxes.claim(to, length);
  }

  /** Sends the message written into the view `claimTo(to, ...)` returned. */
  commitTo(to: number): void {
    this.boxes.commit(to);
  }

  /**
   * Receive the next message from `from` (or from anyone: ANY), in send order per sender.
   * Completes synchronously (an already resolved promise) when the message is there, or arrives
   * while spinning (spinUs).
   */
  recv(from: number = ANY, opts: RecvOptions = {}): Promise<Message> {
    this.status.checkUsable();
    if (from !== ANY) this.checkPeer(from);
    const ready = this.receives.take(from);
    if (ready) return Promise.resolve(ready);
    if (!this.receives.waiting()) {
      const m = this.boxes.readWhole(from, opts.into);
      if (m) return Promise.resolve(m);
    }
    // Post the receive first, so that a large message starting now is copied straight into `into`.
    const r = this.receives.post(from, opts.into);
    this.pump();
    if (r.result === undefined && r.error === undefined && this.spinNs > 0n) {
      const m = this.spinFor(r, from, opts.into);
      if (m) return Promise.resolve(m);
    }
    if (r.result !== undefined) return Promise.resolve(r.result);
    if (r.error !== undefined) return Promise.reject(r.error);
    return new Promise<Message>((resolve, reject) => {
      r.resolve = resolve;
      r.reject = reject;
      if (opts.timeoutMs !== undefined) this.timeOut(r, opts.timeoutMs);
      this.loop.kick();
    });
  }

  /**
   * Spin (up to `spinUs`, extended while a message is in progress, never past MAX_SYNC_SPIN_NS)
   * for the message `r` waits for: the answer of a peer that is running comes well before a futex
   * wait would even start. Returns the message when it could be read straight from the postbox
   * (`r` then withdrawn); otherwise `r` may have been settled meanwhile.
   */
  private spinFor(r: Receiver, from: number, into: Uint8Array | undefined): Message | undefined {
    let seen = this.bells.mine();
    const start = process.hrtime.bigint();
    const cap = start + MAX_SYNC_SPIN_NS;
    let end = start + this.spinNs;
    for (let n = 1; r.result === undefined && r.error === undefined; n++) {
      const now = this.bells.mine();
      if (now !== seen || this.boxes.incoming(from)) {
        seen = now;
        if (this.receives.isOnlyPosted(r)) {
          const m = this.boxes.readWhole(from, into);
          if (m) {
            this.receives.withdrawAll();
            return m;
          }
        }
        // a message in progress (chunks arriving): keep spinning, up to MAX_SYNC_SPIN_NS
        if (this.pump()) end = process.hrtime.bigint() + this.spinNs;
      }
      if ((n & 63) === 0) {
        const t = process.hrtime.bigint();
        if (t >= end || t >= cap) break;
      }
    }
    return undefined;
  }

  /** Reject `r` with TIMEOUT after `ms`, unless a message took it first. */
  private timeOut(r: Receiver, ms: number): void {
    r.timer = setTimeout(() => {
      if (!this.receives.withdraw(r)) return; // already matched to a message in progress
      const who = r.from === ANY ? 'any process' : `process ${r.from}`;
      r.reject!(new ShmError('TIMEOUT', `no message from ${who} within ${ms} ms`));
    }, ms);
  }

  /** Receive without waiting: a message already arrived, or undefined. */
  tryRecv(from: number = ANY): Message | undefined {
    this.status.checkUsable();
    if (from !== ANY) this.checkPeer(from);
    const m =
      this.receives.take(from) ??
      (this.receives.waiting() ? undefined : this.boxes.readWhole(from, undefined));
    if (m) return m;
    this.pump();
    return this.receives.take(from);
  }

  /**
   * Receive without a copy: hands the next message that sits whole in a postbox (of the first
   * peer that has one) to `visit(from, view)`, `view` being the bytes in shared memory, valid
   * only during the call; then frees them. False when no message can be handed over so (none,
   * earlier messages of that peer kept or in progress, a receive waiting, a large message, a
   * record that wraps the postbox's end): `tryRecv` takes those. The visitor copies what it
   * keeps, and must not receive from this endpoint (sending is fine).
   */
  recvInPlace(visit: (from: number, view: Uint8Array) => void): boolean {
    this.status.checkUsable();
    if (this.receives.waiting()) return false;
    for (let q = 0; q < this.nprocs; q++) {
      const view = this.boxes.peekWhole(q);
      if (view === null) continue;
      // the loop must not drain past the held record: a send the visitor queues kicks it later
      this.loop.beginVisit();
      try {
        visit(q, view);
      } finally {
        this.boxes.skip(q);
        this.loop.endVisit();
      }
      return true;
    }
    return false;
  }

  /**
   * The next message from `from` as a view of its postbox record (no copy), when it sits whole
   * there and nothing of `from` is kept or in progress; null when nothing came yet; an empty
   * view when something is there that `tryRecv` must take (a large message, a record that wraps
   * the postbox's end, a message kept or in progress). The record stays in the postbox,
   * unchanged and held, until `skipPeeked(from)` removes it or `leavePeeked(from)` leaves it to
   * the next receive of any kind. For a caller that waits for one peer's next message and decides by its
   * first bytes whether to take it.
   */
  peekFrom(from: number): Uint8Array | null {
    return this.boxes.peekFrom(from);
  }

  /**
   * Leaves the record `peekFrom(from)` returned where it is, no longer held: the next receive of
   * any kind takes it (a caller that peeked must end with this or `skipPeeked`).
   */
  leavePeeked(from: number): void {
    this.boxes.unpeek(from);
  }

  /** Removes the record `peekFrom(from)` returned (its bytes may be overwritten from now on). */
  skipPeeked(from: number): void {
    this.boxes.skip(from);
  }

  /**
   * Whether a synchronous poll has anything to do besides the postbox from `from` (`pollable`
   * without that one): a caller that waits for one peer leaves the rest to a whole poll. Throws
   * as `tryRecv` does when the endpoint cannot be used (closed, failed, segment broken).
   */
  pollableBesides(from: number): boolean {
    this.status.checkUsable();
    return (
      this.sends.any() ||
      this.large.hasFrees() ||
      this.receives.hasKept() ||
      this.boxes.incomingBesides(from)
    );
  }

  /**
   * Resolves once a complete message waits to be taken with `tryRecv` (at once if one does), so a
   * protocol layer can take every message synchronously, in its own loop, and still sleep (spin,
   * then futex wait, as `recv`) while nothing comes. Rejects when the endpoint fails or closes.
   */
  readable(): Promise<void> {
    this.status.checkUsable();
    if (this.receives.hasKept() || this.boxes.incoming(ANY)) return RESOLVED;
    return new Promise<void>((resolve, reject) => {
      this.receives.addReader(resolve, reject);
      this.loop.kick();
    });
  }

  /**
   * Moves queued sends (large messages, sends that found their postbox full) forward now, as far
   * as postbox room, pool space and a free pool lock allow, and frees drained pool chunks: the
   * synchronous progress of a caller that polls instead of waiting for the endpoint's loop.
   * True when anything moved. A send it finishes resolves its promise (its callbacks run later,
   * as microtasks): `queuedTo` tells a poller at once.
   */
  flushSends(): boolean {
    this.status.checkUsable();
    if (this.large.hasFrees()) this.freeNow();
    if (!this.sends.any()) return false;
    return this.sends.advanceNow();
  }

  /**
   * Whether a synchronous poll (`flushSends`, `tryRecv`) has anything to do: a record waits in a
   * postbox or a message in the inbox, a send is queued, or drained pool chunks wait to be freed.
   * A few loads of the postbox heads, no side effect: a spinning caller looks here between polls
   * instead of running a whole poll each time.
   */
  pollable(): boolean {
    return (
      this.sends.any() ||
      this.large.hasFrees() ||
      this.boxes.incoming(ANY) ||
      this.receives.hasKept()
    );
  }

  /**
   * A caller polls this endpoint synchronously now (`tryRecv`, `flushSends` in a spin): while the
   * loop sleeps, peers are told we are awake, so a send to us costs them no futex wake (and us no
   * wake-up of the helper thread and the event loop for what the caller takes anyway). Until
   * `releaseAwake` the caller must poll: messages that come meanwhile wake nothing (the loop
   * sleeps without announcing it, so peers keep writing without a FUTEX_WAKE).
   */
  holdAwake(): void {
    this.loop.holdAwake();
  }

  /**
   * The synchronous poll is over: a sleeping loop announces its sleep again and looks once more
   * (Dekker, see doorbells.ts): a message or an event (room, pool blocks) that came meanwhile
   * rings our own bell, which wakes it.
   */
  releaseAwake(): void {
    this.loop.releaseAwake();
  }

  /** Sends to `to` not yet completely in shared memory (queued by `send`, oldest first). */
  queuedTo(to: number): number {
    return this.sends.queuedTo(to);
  }

  /** Stop: pending sends and receives reject with CLOSED. Does not close the segment. */
  close(): void {
    if (this.status.closed) return;
    this.status.closed = true;
    this.rejectAll(new ShmError('CLOSED', 'the endpoint was closed'));
    if (!this.seg.isClosed) {
      const state = (procLineOffset(this.seg.layout, this.index) >> 2) + P.state;
      Atomics.store(this.seg.i32, state, PROC_CLOSED);
      this.loop.wakeToClose();
    }
  }

  /** A snapshot of the endpoint's state, for diagnostics (e.g. printed when a wait times out). */
  diagnostics(): Record<string, unknown> {
    const rings = [...Array(this.nprocs).keys()]
      .filter((q) => q !== this.index)
      .map((q) => ({
        peer: q,
        ...this.boxes.usedWith(q),
        queued: this.sends.queuedTo(q),
        inbox: this.receives.keptCount(q),
        partial: this.large.progressOf(q),
        ...this.bells.wordsOf(q),
      }));
    return {
      index: this.index,
      running: this.loop.isRunning,
      closed: this.status.closed,
      failure: this.status.failure?.message ?? null,
      receivers: this.receives.postedFrom(),
      queuedSends: this.sends.queuedCount(),
      pendingFrees: this.large.freesPending(),
      bell: this.bells.wordsOf(this.index).bell,
      lockOwner: this.pool?.lock.owner() ?? null,
      poolFreeBlocks: this.pool ? `${this.pool.freeBlocks()}/${this.seg.layout.poolBlocks}` : null,
      rings,
    };
  }

  // ---------------------------------------------------------------------------------------------

  /** Drain the postboxes and free what was copied out, synchronously (if the lock is free). */
  private pump(): boolean {
    const got = this.boxes.drain();
    if (this.large.hasFrees()) this.freeNow();
    return got;
  }

  /** Free drained pool chunks if the lock is free right now (else the loop does it). */
  private freeNow(): void {
    if (!this.large.freeNow()) this.loop.kick();
  }

  /** The loop failed: every pending operation rejects with its error, and later calls throw it. */
  private readonly failed = (err: Error): void => {
    this.status.failure = err;
    this.rejectAll(err);
  };

  private rejectAll(err: Error): void {
    this.receives.failAll(err);
    this.large.failReceivers(err);
    this.sends.rejectAll(err);
  }

  private checkPeer(q: number): void {
    if (!Number.isInteger(q) || q < 0 || q >= this.nprocs || q === this.index) {
      throw new ShmError(
        'BAD_ARGS',
        `peer must be another process's index from 0 to ${this.nprocs - 1} (not our own, ${this.index}), got ${String(q)}`,
      );
    }
  }
}

/** The pool for large messages, with its lock (whose kind the segment says). */
function openPool(segment: ShmSegment, lock: LockOptions | undefined): SharedPool {
  const l = segment.layout;
  const poolLock = new PoolLock(
    segment,
    l.lockOffset,
    l.lockOffset + l.cacheLine,
    segment.lockKind,
    { what: `the pool lock of ${segment.name}`, ...lock },
    (pid) => segment.markBroken(pid),
  );
  return new SharedPool(segment, l, poolLock);
}
