import { ShmError } from './errors';
import { waitWord, wakeWord } from './futex';
import { P, PROC_CLOSED, postboxOffset, procLineOffset } from './layout';
import { isProcessAlive } from './liveness';
import { type LockOptions, PoolLock } from './lock';
import { SharedPool } from './pool';
import { SpscRing } from './ring';
import type { ShmSegment } from './segment';

/** Receive from any peer. */
export const ANY = -1;

export interface EndpointOptions {
  /**
   * Spin synchronously on the main thread for up to this many microseconds, polling our doorbell,
   * before sleeping in an async futex wait. Spinning answers in well under a microsecond but holds
   * the event loop for that long at most. Default: 50 on a 'spin'-lock segment, 0 on a 'block' one.
   */
  spinUs?: number;
  /** The helper thread spins this long before FUTEX_WAIT, µs. Default 0. */
  helperSpinUs?: number;
  /** Largest piece of a large message placed in the pool at once, bytes. Default 256 KiB. */
  chunkSize?: number;
  /** While waiting, check that peers are alive this often, ms. Default 500. */
  peerCheckMs?: number;
  /** Options of the pool lock (its kind comes from the segment). */
  lock?: LockOptions;
  /**
   * Where a large message goes when its first chunk arrives and no posted receive with `into`
   * takes it: return a buffer of at least `length` bytes (the message is then copied once, from
   * the pool into it, and its `data` is a view of it) or undefined for a new buffer. Called
   * synchronously while the endpoint drains its postboxes, in per-sender order; it must not call
   * the endpoint. For a protocol layer that knows which of its buffers the next large message of
   * a sender fills (the sm rpi's rendezvous bodies).
   */
  intoFor?: (from: number, length: number) => Uint8Array | undefined;
}

export interface Message {
  from: number;
  data: Uint8Array;
}

export interface RecvOptions {
  /** Reject with TIMEOUT after this many ms. Default: no timeout. */
  timeoutMs?: number;
  /**
   * Receive into this buffer when the message fits (the result's `data` is then a view of it):
   * saves allocating (and page-faulting) a fresh buffer for every large message. A message that
   * does not fit, or that had already arrived before recv() was called, comes in a new buffer.
   */
  into?: Uint8Array;
}

const KIND_INLINE = 1;
const KIND_CHUNK = 2;
const FIRST = 0x100;
const LAST = 0x200;
const DESC_BYTES = 24;

interface PendingSend {
  data: Uint8Array;
  sent: number;
  resolve: () => void;
  reject: (e: Error) => void;
}

interface Receiver {
  from: number;
  into: Uint8Array | undefined;
  /** Set when the message came before the promise existed (synchronous completion). */
  result: Message | undefined;
  error: Error | undefined;
  resolve: ((m: Message) => void) | undefined;
  reject: ((e: Error) => void) | undefined;
  timer?: NodeJS.Timeout;
}

function settle(r: Receiver, m: Message): void {
  if (r.timer) clearTimeout(r.timer);
  if (r.resolve) r.resolve(m);
  else r.result = m;
}

function fail(r: Receiver, e: Error): void {
  if (r.timer) clearTimeout(r.timer);
  if (r.reject) r.reject(e);
  else r.error = e;
}

interface Partial {
  buf: Uint8Array;
  filled: number;
  /** The receiver this message was matched to when its first chunk arrived. */
  receiver: Receiver | undefined;
}

const RESOLVED = Promise.resolve();
/** recv() never holds the event loop longer than this while spinning, even with data flowing. */
const MAX_SYNC_SPIN_NS = 5_000_000n;

/**
 * Messages between the processes of one segment: any size, in order per pair, nothing lost or
 * duplicated. A message up to `shortLimit` bytes travels whole through the postbox of the pair
 * (one copy in, one copy out); a larger one is cut into chunks placed in the pool (allocated under
 * the pool lock), and the postbox carries each chunk's descriptor, so order is still the postbox's.
 *
 * SLEEP / WAKE. Each process has a doorbell word (a counter) and a `sleeping` flag in its line.
 * An awake process (spinning, or looking for work) polls the heads of its incoming postboxes and
 * its doorbell. A process that found nothing to do
 *   1. read the doorbell value `seen` *before* it looked for work,
 *   2. spins for spinUs polling postboxes and doorbell (no flag set: peers need no syscall),
 *   3. sets `sleeping` = 1, looks again (doorbell still `seen`? postboxes still empty?), and sleeps
 *      in FUTEX_WAIT(doorbell, seen) on its helper thread.
 * A producer that published a record (Atomics.store of head) then does Atomics.load(sleeping) and,
 * only if set, Atomics.add(doorbell) + FUTEX_WAKE. Dekker on (head, sleeping), all operations
 * sequentially consistent: either the sleeper's second look (after its store of sleeping) sees the
 * new head, or the producer's load sees sleeping = 1 and rings; a ring that lands between the
 * second look and the sleep changes the doorbell, so FUTEX_WAIT (which compares in the kernel)
 * returns at once. Events other than messages (room freed in a postbox whose producer set
 * producerWaiting, pool blocks freed for a process that set waitPool, a local kick) always
 * Atomics.add the doorbell after publishing the event and wake if `sleeping`; since `seen` was read
 * before the sleeper checked those conditions, the same argument holds. producerWaiting and waitPool
 * are themselves Dekker flags: set, then re-check (room / allocation); the other side publishes
 * (tail store / free), then reads the flag.
 */
export class ShmEndpoint {
  readonly index: number;
  readonly nprocs: number;
  readonly shortLimit: number;
  readonly pool: SharedPool | null;
  private readonly seg: ShmSegment;
  private readonly out: (SpscRing | null)[] = [];
  private readonly inb: (SpscRing | null)[] = [];
  private readonly bellIdx: number[] = [];
  private readonly sleepIdx: number[] = [];
  private readonly waitPoolIdx: number[] = [];
  private readonly sendQ: PendingSend[][] = [];
  private readonly inbox: Message[][] = [];
  private readonly partial: (Partial | null)[] = [];
  private readonly receivers: Receiver[] = [];
  private pendingFrees: number[] = [];
  /** Callers of readable() waiting for a complete message. */
  private readers: { resolve: () => void; reject: (e: Error) => void }[] = [];
  /** The loop sleeps in FUTEX_WAIT with `sleeping` announced (see holdAwake). */
  private asleep = false;
  /** Between holdAwake and releaseAwake: the loop sleeps without announcing it. */
  private heldAwake = false;
  /** The doorbell value the sleeping loop waits to change. */
  private asleepOn = 0;
  /** advanceSendsNow() stopped because another process held the pool lock. */
  private lockBusy = false;
  private queuedSends = 0;
  private partials = 0;
  private running = false;
  /**
   * recvInPlace is handing a record that still sits in its postbox to the visitor: the loop must
   * not start meanwhile (a send the visitor queues would run it synchronously, and its drain would
   * read past the record the visit holds); it starts once the record is freed.
   */
  private visiting = false;
  private kickAfterVisit = false;
  private closed = false;
  private failure: Error | null = null;
  private readonly spinNs: bigint;
  private readonly helperSpinNs: number;
  private readonly chunkSize: number;
  private readonly peerCheckMs: number;
  private readonly intoFor: EndpointOptions['intoFor'];
  private readonly desc = new Uint32Array(DESC_BYTES / 4);
  private readonly descBytes = new Uint8Array(this.desc.buffer);
  private lastPeerCheck = Date.now();

  constructor(segment: ShmSegment, opts: EndpointOptions = {}) {
    if (segment.isClosed) throw new ShmError('CLOSED', 'the segment is closed');
    this.seg = segment;
    const l = segment.layout;
    this.index = segment.index;
    this.nprocs = l.nprocs;
    this.shortLimit = l.shortLimit;
    const spinUs = opts.spinUs ?? (segment.lockKind === 'spin' ? 50 : 0);
    const helperSpinUs = opts.helperSpinUs ?? 0;
    if (!(spinUs >= 0 && spinUs <= 1e6) || !(helperSpinUs >= 0 && helperSpinUs <= 1e6)) {
      throw new ShmError('BAD_ARGS', 'spinUs and helperSpinUs must be from 0 to 1e6 microseconds');
    }
    this.spinNs = BigInt(Math.round(spinUs * 1000));
    this.helperSpinNs = Math.round(helperSpinUs * 1000);
    const chunk = opts.chunkSize ?? 256 * 1024;
    if (!Number.isInteger(chunk) || chunk < 1) {
      throw new ShmError('BAD_ARGS', `chunkSize must be a positive integer, got ${chunk}`);
    }
    this.chunkSize = Math.max(l.poolBlock, Math.min(chunk, l.poolSize));
    this.peerCheckMs = opts.peerCheckMs ?? 500;
    this.intoFor = opts.intoFor;
    for (let q = 0; q < l.nprocs; q++) {
      const line = procLineOffset(l, q) >> 2;
      this.bellIdx.push(line + P.bell);
      this.sleepIdx.push(line + P.sleeping);
      this.waitPoolIdx.push(line + P.waitPool);
      this.sendQ.push([]);
      this.inbox.push([]);
      this.partial.push(null);
      if (q === this.index) {
        this.out.push(null);
        this.inb.push(null);
        continue;
      }
      const o = postboxOffset(l, this.index, q);
      const i = postboxOffset(l, q, this.index);
      this.out.push(new SpscRing(segment.buffer, o, o + l.cacheLine, l.ringCapacity));
      this.inb.push(new SpscRing(segment.buffer, i, i + l.cacheLine, l.ringCapacity));
    }
    if (l.poolBlocks > 0) {
      const lock = new PoolLock(
        segment,
        l.lockOffset,
        l.lockOffset + l.cacheLine,
        segment.lockKind,
        { what: `the pool lock of ${segment.name}`, ...opts.lock },
        (pid) => segment.markBroken(pid),
      );
      this.pool = new SharedPool(segment, l, lock);
    } else {
      this.pool = null;
    }
  }

  /**
   * Send `data` to process `to`. Resolves once the bytes are in shared memory (the caller may
   * then reuse `data`); rejects on a dead peer, a broken segment, or close().
   */
  send(to: number, data: Uint8Array): Promise<void> {
    this.checkUsable();
    this.checkPeer(to);
    if (!(data instanceof Uint8Array)) {
      throw new ShmError('BAD_ARGS', 'data must be a Uint8Array (or Buffer)');
    }
    const q = this.sendQ[to]!;
    if (q.length === 0 && data.length <= this.shortLimit) {
      if (this.out[to]!.tryWrite(KIND_INLINE, data)) {
        this.notifyMessage(to);
        return RESOLVED;
      }
    }
    if (data.length > this.shortLimit && this.pool === null) {
      throw new ShmError(
        'BAD_ARGS',
        `a ${data.length}-byte message needs the pool, but this segment has none (poolSize 0); its limit is shortLimit = ${this.shortLimit} bytes`,
      );
    }
    return new Promise<void>((resolve, reject) => {
      q.push({ data, sent: 0, resolve, reject });
      this.queuedSends++;
      this.kick();
    });
  }

  /**
   * Send now if it fits in the postbox; false (nothing sent) otherwise. Never queues. With
   * `more`, the message is `data` followed by `more` (a header and a body, written into the
   * postbox without joining them first).
   */
  trySend(to: number, data: Uint8Array, more?: Uint8Array): boolean {
    this.checkUsable();
    this.checkPeer(to);
    const length = data.length + (more === undefined ? 0 : more.length);
    if (this.sendQ[to]!.length > 0 || length > this.shortLimit) return false;
    if (!this.out[to]!.tryWrite(KIND_INLINE, data, more)) return false;
    this.notifyMessage(to);
    return true;
  }

  /**
   * Receive the next message from `from` (or from anyone: ANY), in send order per sender.
   * Completes synchronously (an already resolved promise) when the message is there, or arrives
   * while spinning (spinUs).
   */
  recv(from: number = ANY, opts: RecvOptions = {}): Promise<Message> {
    this.checkUsable();
    if (from !== ANY) this.checkPeer(from);
    const ready = this.take(from);
    if (ready) return Promise.resolve(ready);
    if (this.receivers.length === 0) {
      const m = this.fastRecv(from, opts.into);
      if (m) return Promise.resolve(m);
    }
    // Post the receive first, so that a large message starting now is copied straight into `into`.
    const r: Receiver = {
      from,
      into: opts.into,
      result: undefined,
      error: undefined,
      resolve: undefined,
      reject: undefined,
    };
    this.receivers.push(r);
    this.pump();
    if (r.result === undefined && r.error === undefined && this.spinNs > 0n) {
      const bell = this.bellIdx[this.index]!;
      const i32 = this.seg.i32;
      let seen = Atomics.load(i32, bell);
      const start = process.hrtime.bigint();
      const cap = start + MAX_SYNC_SPIN_NS;
      let end = start + this.spinNs;
      for (let n = 1; r.result === undefined && r.error === undefined; n++) {
        const now = Atomics.load(i32, bell);
        if (now !== seen || this.incoming(from)) {
          seen = now;
          if (this.receivers.length === 1 && this.receivers[0] === r) {
            const m = this.fastRecv(from, opts.into);
            if (m) {
              this.receivers.length = 0;
              return Promise.resolve(m);
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
    }
    if (r.result !== undefined) return Promise.resolve(r.result);
    if (r.error !== undefined) return Promise.reject(r.error);
    return new Promise<Message>((resolve, reject) => {
      r.resolve = resolve;
      r.reject = reject;
      const t = opts.timeoutMs;
      if (t !== undefined) {
        r.timer = setTimeout(() => {
          const k = this.receivers.indexOf(r);
          if (k < 0) return; // already matched to a message in progress
          this.receivers.splice(k, 1);
          reject(
            new ShmError(
              'TIMEOUT',
              `no message from ${from === ANY ? 'any process' : `process ${from}`} within ${t} ms`,
            ),
          );
        }, t);
      }
      this.kick();
    });
  }

  /** Receive without waiting: a message already arrived, or undefined. */
  tryRecv(from: number = ANY): Message | undefined {
    this.checkUsable();
    if (from !== ANY) this.checkPeer(from);
    const m =
      this.take(from) ?? (this.receivers.length === 0 ? this.fastRecv(from, undefined) : undefined);
    if (m) return m;
    this.pump();
    return this.take(from);
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
    this.checkUsable();
    if (this.receivers.length > 0) return false;
    for (let q = 0; q < this.nprocs; q++) {
      const ring = this.inb[q];
      if (!ring || this.partial[q] || this.inbox[q]!.length > 0) continue;
      const view = ring.peek(KIND_INLINE);
      if (view === null) continue;
      this.visiting = true;
      try {
        visit(q, view);
      } finally {
        this.visiting = false;
        ring.skip();
        if (ring.takeProducerWaiting()) this.ringBell(q);
        if (this.kickAfterVisit) {
          this.kickAfterVisit = false;
          this.kick();
        }
      }
      return true;
    }
    return false;
  }

  /**
   * Resolves once a complete message waits to be taken with `tryRecv` (at once if one does), so a
   * protocol layer can take every message synchronously, in its own loop, and still sleep (spin,
   * then futex wait, as `recv`) while nothing comes. Rejects when the endpoint fails or closes.
   */
  readable(): Promise<void> {
    this.checkUsable();
    if (this.hasInbox() || this.incoming(ANY)) return RESOLVED;
    return new Promise<void>((resolve, reject) => {
      this.readers.push({ resolve, reject });
      this.kick();
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
    this.checkUsable();
    if (this.pendingFrees.length > 0) this.flushFreesNow();
    if (this.queuedSends === 0) return false;
    return this.advanceSendsNow();
  }

  /**
   * Whether a synchronous poll (`flushSends`, `tryRecv`) has anything to do: a record waits in a
   * postbox or a message in the inbox, a send is queued, or drained pool chunks wait to be freed.
   * A few loads of the postbox heads, no side effect: a spinning caller looks here between polls
   * instead of running a whole poll each time.
   */
  pollable(): boolean {
    return (
      this.queuedSends > 0 || this.pendingFrees.length > 0 || this.incoming(ANY) || this.hasInbox()
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
    this.heldAwake = true;
    if (this.asleep) Atomics.store(this.seg.i32, this.sleepIdx[this.index]!, 0);
  }

  /**
   * The synchronous poll is over: a sleeping loop announces its sleep again and looks once more
   * (Dekker, see the class comment): a message or an event (room, pool blocks) that came
   * meanwhile rings our own bell, which wakes it.
   */
  releaseAwake(): void {
    this.heldAwake = false;
    if (!this.asleep || this.seg.isClosed) return;
    const i32 = this.seg.i32;
    Atomics.store(i32, this.sleepIdx[this.index]!, 1);
    // a message, or an event that rang while peers thought us awake (no FUTEX_WAKE then)
    const rang = Atomics.load(i32, this.bellIdx[this.index]!) !== this.asleepOn;
    if (rang || this.incoming(ANY)) this.ringBell(this.index);
  }

  /** Sends to `to` not yet completely in shared memory (queued by `send`, oldest first). */
  queuedTo(to: number): number {
    return this.sendQ[to]!.length;
  }

  /**
   * The common case, without queues: nobody else is waiting, and the next record from `from`
   * (ANY: the first peer that has one) is a whole message. Read it straight into `into`.
   */
  private fastRecv(from: number, into: Uint8Array | undefined): Message | undefined {
    if (from === ANY) {
      for (let q = 0; q < this.nprocs; q++) {
        if (q === this.index) continue;
        const m = this.fastRecv(q, into);
        if (m) return m;
      }
      return undefined;
    }
    if (this.partial[from] || this.inbox[from]!.length > 0) return undefined;
    const ring = this.inb[from]!;
    const meta = ring.peekMeta();
    if (meta < 0 || (meta & 0xff) !== KIND_INLINE) return undefined;
    const data = ring.readPayload(into)!;
    if (ring.takeProducerWaiting()) this.ringBell(from);
    return { from, data };
  }

  /** Drain the postboxes and free what was copied out, synchronously (if the lock is free). */
  private pump(): boolean {
    const got = this.drain();
    if (this.pendingFrees.length > 0) this.flushFreesNow();
    return got;
  }

  /** Stop: pending sends and receives reject with CLOSED. Does not close the segment. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const err = new ShmError('CLOSED', 'the endpoint was closed');
    this.rejectAll(err);
    if (!this.seg.isClosed) {
      Atomics.store(
        this.seg.i32,
        (procLineOffset(this.seg.layout, this.index) >> 2) + P.state,
        PROC_CLOSED,
      );
      this.heldAwake = false;
      if (this.asleep) Atomics.store(this.seg.i32, this.sleepIdx[this.index]!, 1);
      this.ringBell(this.index); // end our own wait, if the loop sleeps
    }
  }

  /** A snapshot of the endpoint's state, for diagnostics (e.g. printed when a wait times out). */
  diagnostics(): Record<string, unknown> {
    const l = this.seg.layout;
    const i32 = this.seg.i32;
    const rings = [...Array(this.nprocs).keys()]
      .filter((q) => q !== this.index)
      .map((q) => ({
        peer: q,
        outUsed: this.out[q]!.used(),
        inUsed: this.inb[q]!.used(),
        queued: this.sendQ[q]!.length,
        inbox: this.inbox[q]!.length,
        partial: this.partial[q]
          ? `${this.partial[q]!.filled}/${this.partial[q]!.buf.length}`
          : null,
        bell: i32[this.bellIdx[q]!],
        sleeping: i32[this.sleepIdx[q]!],
        waitPool: i32[this.waitPoolIdx[q]!],
      }));
    return {
      index: this.index,
      running: this.running,
      closed: this.closed,
      failure: this.failure?.message ?? null,
      receivers: this.receivers.map((r) => r.from),
      queuedSends: this.queuedSends,
      pendingFrees: this.pendingFrees.length,
      bell: i32[this.bellIdx[this.index]!],
      lockOwner: this.pool?.lock.owner() ?? null,
      poolFreeBlocks: this.pool ? `${this.pool.freeBlocks()}/${l.poolBlocks}` : null,
      rings,
    };
  }

  // ---------------------------------------------------------------------------------------------

  private checkUsable(): void {
    if (this.closed || this.seg.isClosed) throw new ShmError('CLOSED', 'the endpoint is closed');
    if (this.failure) throw this.failure;
    if (this.seg.isBroken) {
      throw new ShmError(
        'BROKEN',
        `shared segment ${this.seg.name} is marked broken (a process died holding its pool lock); end the job`,
      );
    }
  }

  private checkPeer(q: number): void {
    if (!Number.isInteger(q) || q < 0 || q >= this.nprocs || q === this.index) {
      throw new ShmError(
        'BAD_ARGS',
        `peer must be another process's index from 0 to ${this.nprocs - 1} (not our own, ${this.index}), got ${String(q)}`,
      );
    }
  }

  /** Is a complete message kept for `tryRecv`? */
  private hasInbox(): boolean {
    for (let q = 0; q < this.nprocs; q++) if (this.inbox[q]!.length > 0) return true;
    return false;
  }

  /** Resolve readable() once a complete message is kept (the loop drained one). */
  private wakeReaders(): void {
    if (this.readers.length === 0 || !this.hasInbox()) return;
    for (const r of this.readers.splice(0)) r.resolve();
  }

  private take(from: number): Message | undefined {
    if (from !== ANY) return this.inbox[from]!.shift();
    for (let q = 0; q < this.nprocs; q++) {
      const m = this.inbox[q]!.shift();
      if (m) return m;
    }
    return undefined;
  }

  /**
   * A record was published in the postbox to `q`: wake `q` only if it sleeps. A process that is
   * awake polls its postboxes itself, so the common (spinning) case costs one load of a line that
   * stays shared, instead of a read-modify-write that would steal it. See the class comment.
   */
  private notifyMessage(q: number): void {
    const i32 = this.seg.i32;
    if (Atomics.load(i32, this.sleepIdx[q]!) !== 0) {
      const b = this.bellIdx[q]!;
      Atomics.add(i32, b, 1);
      wakeWord(this.seg, b << 2, 0);
    }
  }

  /** Is a record waiting in the postbox from `from` (ANY: from anyone)? */
  private incoming(from: number): boolean {
    if (from !== ANY) return !this.inb[from]!.isEmpty();
    for (let q = 0; q < this.nprocs; q++) {
      const r = this.inb[q];
      if (r && !r.isEmpty()) return true;
    }
    return false;
  }

  /** Something other than a message (room, pool blocks, a kick) for `q`: always ring. */
  private ringBell(q: number): void {
    const i32 = this.seg.i32;
    const b = this.bellIdx[q]!;
    Atomics.add(i32, b, 1);
    if (Atomics.load(i32, this.sleepIdx[q]!) !== 0) wakeWord(this.seg, b << 2, 0);
  }

  /** Copy every complete record out of our incoming postboxes. Returns whether anything came. */
  private drain(): boolean {
    let got = false;
    const u8 = this.seg.u8;
    for (let q = 0; q < this.nprocs; q++) {
      const ring = this.inb[q];
      if (!ring) continue;
      let n = 0;
      for (;;) {
        const rec = ring.tryRead();
        if (!rec) break;
        n++;
        const kind = rec.meta & 0xff;
        if (kind === KIND_INLINE) {
          this.deliver({ from: q, data: rec.data });
        } else if (kind === KIND_CHUNK) {
          const d = new Uint32Array(rec.data.buffer, rec.data.byteOffset, DESC_BYTES / 4);
          const off = d[0]! + d[1]! * 2 ** 32;
          const len = d[2]!;
          let p = this.partial[q];
          if (rec.meta & FIRST) {
            if (p) throw this.corrupt(`a new large message from ${q} began inside another`);
            p = this.startLarge(q, d[3]! + d[4]! * 2 ** 32);
            this.partial[q] = p;
            this.partials++;
          }
          if (!p || p.filled + len > p.buf.length || off + len > u8.length) {
            throw this.corrupt(`a chunk from ${q} does not fit its message`);
          }
          p.buf.set(u8.subarray(off, off + len), p.filled);
          p.filled += len;
          this.pendingFrees.push(off);
          if (rec.meta & LAST) {
            if (p.filled !== p.buf.length) throw this.corrupt(`a large message from ${q} is short`);
            this.partial[q] = null;
            this.partials--;
            if (p.receiver) settle(p.receiver, { from: q, data: p.buf });
            else this.deliver({ from: q, data: p.buf });
          }
        } else {
          throw this.corrupt(`unknown record kind ${kind} from ${q}`);
        }
      }
      if (n > 0) {
        got = true;
        if (ring.takeProducerWaiting()) this.ringBell(q);
      }
    }
    return got;
  }

  private corrupt(what: string): ShmError {
    const e = new ShmError(
      'BROKEN',
      `shared segment ${this.seg.name}: ${what}; the segment is corrupted, end the job`,
    );
    this.failure = e;
    return e;
  }

  /** Hand a complete message to the first matching posted receive, or keep it. */
  private deliver(m: Message): void {
    const k = this.matchReceiver(m.from);
    if (k < 0) {
      this.inbox[m.from]!.push(m);
      return;
    }
    const r = this.receivers.splice(k, 1)[0]!;
    const into = r.into;
    if (into && into.length >= m.data.length) {
      into.set(m.data);
      settle(r, { from: m.from, data: into.subarray(0, m.data.length) });
    } else {
      settle(r, m);
    }
  }

  private matchReceiver(from: number): number {
    // Messages already kept for this sender come first (per-sender order).
    if (this.inbox[from]!.length > 0) return -1;
    for (let k = 0; k < this.receivers.length; k++) {
      const r = this.receivers[k]!;
      if (r.from === ANY || r.from === from) return k;
    }
    return -1;
  }

  /**
   * The first chunk of a large message: match it to a posted receive now (so it is copied
   * straight into that receive's buffer), else ask `intoFor`, or allocate a buffer for it.
   */
  private startLarge(from: number, total: number): Partial {
    const k = this.matchReceiver(from);
    const r = k >= 0 ? this.receivers.splice(k, 1)[0]! : undefined;
    const into = r?.into ?? this.intoFor?.(from, total);
    const buf =
      into && into.length >= total ? into.subarray(0, total) : Buffer.allocUnsafeSlow(total);
    return { buf, filled: 0, receiver: r };
  }

  /** Free drained pool chunks if the lock is free right now (else the loop does it). */
  private flushFreesNow(): void {
    const pool = this.pool!;
    if (!pool.lock.tryAcquire()) {
      this.kick();
      return;
    }
    const offs = this.pendingFrees;
    this.pendingFrees = [];
    try {
      pool.freeLockedMany(offs);
    } finally {
      pool.lock.release();
    }
    this.notifyPoolWaiters();
  }

  private notifyPoolWaiters(): void {
    const i32 = this.seg.i32;
    for (let q = 0; q < this.nprocs; q++) {
      if (q === this.index) continue;
      const w = this.waitPoolIdx[q]!;
      if (Atomics.load(i32, w) !== 0 && Atomics.exchange(i32, w, 0) !== 0) this.ringBell(q);
    }
  }

  private hasWork(): boolean {
    return (
      this.receivers.length > 0 ||
      this.readers.length > 0 ||
      this.queuedSends > 0 ||
      this.pendingFrees.length > 0 ||
      this.partials > 0
    );
  }

  /** Start the progress loop, or wake it if it sleeps. */
  private kick(): void {
    if (this.visiting) {
      this.kickAfterVisit = true;
      return;
    }
    if (this.running) {
      this.ringBell(this.index);
      return;
    }
    this.running = true;
    this.run().then(undefined, (err: Error) => {
      this.failure = err;
      this.rejectAll(err);
    });
  }

  private rejectAll(err: Error): void {
    for (const r of this.receivers.splice(0)) fail(r, err);
    for (const r of this.readers.splice(0)) r.reject(err);
    for (let q = 0; q < this.nprocs; q++) {
      const p = this.partial[q];
      if (p?.receiver) {
        fail(p.receiver, err);
        p.receiver = undefined;
      }
    }
    for (const q of this.sendQ) {
      for (const s of q.splice(0)) s.reject(err);
    }
    this.queuedSends = 0;
  }

  /**
   * The progress loop. loopBody clears `running` itself (stopped()) in the same tick as its last
   * hasWork() check: clearing it after an `await` would leave a window in which a kick() sees
   * running = true with no loop left to notice its work (that bug lost a send once). On an error
   * the endpoint fails as a whole, so clearing it late there is harmless.
   */
  private async run(): Promise<void> {
    try {
      await this.loopBody();
    } catch (err) {
      this.running = false;
      if (!this.closed) throw err; // after close(), the segment may be unmapped under us
    }
  }

  private async loopBody(): Promise<void> {
    const i32 = this.seg.i32;
    const myBell = this.bellIdx[this.index]!;
    const mySleep = this.sleepIdx[this.index]!;
    while (!this.closed && this.hasWork()) {
      const seen = Atomics.load(i32, myBell);
      let progressed = this.drain();
      if (this.pendingFrees.length > 0) {
        const offs = this.pendingFrees;
        this.pendingFrees = [];
        await this.pool!.free(offs);
        if (this.closed) return this.stopped();
        this.notifyPoolWaiters();
        progressed = true;
      }
      if (this.queuedSends > 0) {
        progressed = this.advanceSendsNow() || progressed;
        if (this.lockBusy) {
          await this.pool!.lock.run(() => undefined); // until the other holder let go
          if (this.closed) return this.stopped();
          continue;
        }
      }
      this.wakeReaders();
      if (progressed || !this.hasWork()) continue;
      // idle: spin, then sleep on the doorbell (see the class comment)
      if (this.spinNs > 0n) {
        const end = process.hrtime.bigint() + this.spinNs;
        let changed = false;
        for (let n = 1; ; n++) {
          if (Atomics.load(i32, myBell) !== seen || this.incoming(ANY)) {
            changed = true;
            break;
          }
          if ((n & 63) === 0 && process.hrtime.bigint() >= end) break;
        }
        if (changed) continue;
      }
      // held awake (a synchronous poller takes the messages): sleep without announcing it;
      // releaseAwake announces it later and looks again
      if (!this.heldAwake) Atomics.store(i32, mySleep, 1);
      // after announcing that we sleep, look again: a producer that did not see the flag published
      // before our look (message notifications ring only sleepers)
      if (Atomics.load(i32, myBell) === seen && !this.incoming(ANY)) {
        this.asleep = true;
        this.asleepOn = seen;
        const r = await waitWord(this.seg, myBell << 2, seen, {
          timeoutMs: this.peerCheckMs,
          helperSpinNs: this.helperSpinNs,
        });
        this.asleep = false;
        if (this.closed || this.seg.isClosed) return this.stopped();
        Atomics.store(i32, mySleep, 0);
        if (r === 'timed-out') this.checkPeers(true);
      } else {
        Atomics.store(i32, mySleep, 0);
      }
      if (Date.now() - this.lastPeerCheck >= this.peerCheckMs) this.checkPeers(false);
    }
    this.stopped();
  }

  /** Called synchronously (same tick) with the loop's last look at its work. */
  private stopped(): void {
    this.running = false;
  }

  /** Reject waits that can never complete: a peer died, or closed with nothing left for us. */
  private checkPeers(idle: boolean): void {
    this.lastPeerCheck = Date.now();
    if (this.seg.isBroken) {
      throw new ShmError(
        'BROKEN',
        `shared segment ${this.seg.name} was marked broken (a process died holding its pool lock); end the job`,
      );
    }
    for (let q = 0; q < this.nprocs; q++) {
      if (q === this.index) continue;
      const pid = this.seg.pidOf(q);
      // a peer that closed its endpoint and left is not dead; one that vanished without closing is
      if (pid !== 0 && this.seg.stateOf(q) !== PROC_CLOSED && !isProcessAlive(pid)) {
        throw new ShmError(
          'PEER_DEAD',
          `process ${q} (pid ${pid}) of shared segment ${this.seg.name} died; messages to and from it cannot complete: end the job`,
        );
      }
      if (
        idle &&
        this.seg.stateOf(q) === PROC_CLOSED &&
        this.inb[q]!.isEmpty() &&
        !this.partial[q]
      ) {
        const err = new ShmError(
          'PEER_DEAD',
          `process ${q} closed its endpoint; nothing more will come from it`,
        );
        for (let k = this.receivers.length - 1; k >= 0; k--) {
          const r = this.receivers[k]!;
          if (r.from === q) {
            this.receivers.splice(k, 1);
            fail(r, err);
          }
        }
      }
    }
  }

  /**
   * Move queued sends forward as far as postbox room, pool space and the pool lock allow, without
   * waiting: synchronous, so the loop and `flushSends` never interleave on one send. Sets
   * `lockBusy` when it stopped at a pool lock held by another process (the loop waits for it).
   */
  private advanceSendsNow(): boolean {
    let progressed = false;
    this.lockBusy = false;
    const i32 = this.seg.i32;
    const u8 = this.seg.u8;
    for (let to = 0; to < this.nprocs; to++) {
      const q = this.sendQ[to]!;
      const ring = this.out[to]!;
      while (q.length > 0) {
        const s = q[0]!;
        const len = s.data.length;
        if (len <= this.shortLimit) {
          if (!ring.tryWrite(KIND_INLINE, s.data)) {
            if (!this.waitForRoom(ring, len)) break;
            continue;
          }
          this.notifyMessage(to);
        } else {
          const pool = this.pool!;
          let blocked = false;
          while (s.sent < len) {
            if (!ring.canWrite(DESC_BYTES) && !this.waitForRoom(ring, DESC_BYTES)) {
              blocked = true;
              break;
            }
            let n = Math.min(len - s.sent, this.chunkSize);
            let off = pool.tryAlloc(n);
            while (off === -1 && n > pool.blockSize) {
              n = Math.max(pool.blockSize, n >>> 1);
              off = pool.tryAlloc(n);
            }
            if (off === -1) {
              // no room in the pool: announce, then retry once (Dekker, see class comment)
              Atomics.store(i32, this.waitPoolIdx[this.index]!, 1);
              off = pool.tryAlloc(n);
              if (off !== -1) Atomics.store(i32, this.waitPoolIdx[this.index]!, 0);
            }
            if (off === null) this.lockBusy = true;
            if (off === null || off === -1) {
              blocked = true;
              break;
            }
            u8.set(s.data.subarray(s.sent, s.sent + n), off);
            const d = this.desc;
            d[0] = off % 2 ** 32;
            d[1] = Math.floor(off / 2 ** 32);
            d[2] = n;
            d[3] = len % 2 ** 32;
            d[4] = Math.floor(len / 2 ** 32);
            const flags = (s.sent === 0 ? FIRST : 0) | (s.sent + n === len ? LAST : 0);
            if (!ring.tryWrite(KIND_CHUNK | flags, this.descBytes)) {
              throw this.corrupt('postbox room vanished while we are its only producer');
            }
            s.sent += n;
            this.notifyMessage(to);
            progressed = true;
          }
          if (blocked) break;
        }
        q.shift();
        this.queuedSends--;
        progressed = true;
        s.resolve();
      }
    }
    return progressed;
  }

  /** The postbox is full: announce that we wait, then re-check (Dekker). True = room now. */
  private waitForRoom(ring: SpscRing, payload: number): boolean {
    ring.setProducerWaiting(1);
    if (ring.canWrite(payload)) {
      ring.setProducerWaiting(0);
      return true;
    }
    return false;
  }
}
