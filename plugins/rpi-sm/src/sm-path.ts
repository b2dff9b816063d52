import type { Proc, RpiHost, RpiRequest } from '@ssi/mpi';
import {
  allocMessage,
  deliverBytes,
  ENVELOPE_BYTES,
  EnvFlag,
  ErrorClass,
  KIND_SHIFT,
  MpiError,
  ReqState,
  ReqType,
  UnexpectedMessage,
  WireEnvelope,
  writeEnvelope,
} from '@ssi/mpi';
import { ANY, isProcessAlive, type ShmEndpoint } from '@ssi/shm';

/** Bits of `req.rpi` for on-node sends. */
const S_WRITTEN = 1; // every byte is in shared memory
const S_ACKED = 2; // the receiver matched it (synchronous ACK, or clear to send)
const S_CANCELING = 4; // a cancel request is on its way

/** One on-node peer. */
interface PeerState {
  readonly proc: Proc;
  /** Its slot in the segment. */
  readonly index: number;
  /** Queued messages a later ACK / clear to send or cancel names (synchronous or long), by sid. */
  readonly unexpectedBySid: Map<number, UnexpectedMessage>;
  /**
   * Receives we sent a clear to send for, in that order: the peer sends their bodies in the
   * order the clears arrive, so its next pool message is the body of the first one.
   */
  readonly bodies: RpiRequest[];
  /** How many of `bodies` already have a body arriving (the endpoint's `intoFor` took them). */
  bodiesStarted: number;
  /**
   * What the peer's next record is the eager body of (an envelope whose payload did not fit its
   * record): a posted receive or a queued message; null when the next record is a new message.
   */
  eagerBodyFor: RpiRequest | UnexpectedMessage | null;
  /**
   * The sends handed to the endpoint's queue (`ep.send`) for this peer, oldest first: the send
   * whose bytes they carry, or null for a control record. The endpoint's `queuedTo` tells how
   * many are not yet written: the older ones are (see `reap`).
   */
  readonly queued: (RpiRequest | null)[];
}

/**
 * The on-node path of the sm rpi: MPI messages between the processes of one node through their
 * segment's endpoint (postboxes and pool of `@ssi/shm`, in order per pair).
 *
 * Wire: every envelope is the 32-byte envelope of `@ssi/mpi` (`writeEnvelope`, tcp's framing,
 * `seq` included), sent as one postbox record.
 * - Eager (payload up to S, `rpi_sm_short`): the payload rides in the envelope's record, or, when
 *   the two do not fit one record, in the next record of the pair.
 * - Rendezvous (payload above S): a request to send (LONG); the receiver answers with a clear to
 *   send (ACK|LONG) once a receive matched, and the body follows alone, through the pool. The
 *   receiver knows whose body comes next from a sender (the order of its clears), so the endpoint
 *   copies each chunk from the pool straight into the posted buffer (`intoFor`): one copy.
 * - Synchronous eager sends wait for an ACK; a cancel asks the receiver to withdraw a synchronous
 *   or long message it has not matched (LONG sends are cancellable until the clear to send).
 */
export class SmPath {
  private readonly peers = new Map<Proc, PeerState>();
  private readonly byIndex: (PeerState | undefined)[] = [];
  /** Sends waiting for their bytes to be written, an ACK or a clear to send, by id. */
  private readonly sends = new Map<number, RpiRequest>();
  private readonly env = new WireEnvelope();
  private readonly ctl = Buffer.alloc(ENVELOPE_BYTES);
  /** Where an inline record is built: `trySend` copies it into the postbox at once. */
  private readonly record: Buffer;
  /** Largest payload that travels in the envelope's own postbox record. */
  readonly inlineMax: number;
  /** Largest payload sent eagerly (S): envelope and body each fit a postbox record. */
  readonly eagerMax: number;
  private ep!: ShmEndpoint;
  private closing = false;
  private loop: Promise<void> = Promise.resolve();
  /** `spinMs` of `advance(true)`: rpi_sm_spin_us (0 in block mode: one look, no spin). */
  private spinMs = 0;
  /** `stayAwake` holds the endpoint awake until an event-loop turn without a spin. */
  private awake = false;
  /** `advance` ran since the last turn (someone polls: stay awake). */
  private polledThisTurn = false;
  readonly stats = { inline: 0, eagerTwoRecords: 0, rendezvous: 0, bodiesDirect: 0 };

  constructor(
    private readonly host: RpiHost,
    localProcs: readonly Proc[],
    shortLimit: number,
  ) {
    this.eagerMax = shortLimit;
    this.inlineMax = shortLimit - ENVELOPE_BYTES;
    this.record = Buffer.allocUnsafe(shortLimit);
    localProcs.forEach((proc, index) => {
      if (proc === host.myProc) return;
      const st: PeerState = {
        proc,
        index,
        unexpectedBySid: new Map(),
        bodies: [],
        bodiesStarted: 0,
        eagerBodyFor: null,
        queued: [],
      };
      this.peers.set(proc, st);
      this.byIndex[index] = st;
    });
  }

  /** For the endpoint's options: the buffer a sender's next large message (a body) goes into. */
  readonly intoFor = (from: number, length: number): Uint8Array | undefined => {
    const peer = this.byIndex[from];
    const req = peer?.bodies[peer.bodiesStarted];
    if (peer === undefined || req === undefined) return undefined;
    peer.bodiesStarted++;
    return req.buf !== null && req.stLength === length ? req.buf : undefined;
  };

  /**
   * Starts taking messages (once the whole rpi is set up): synchronously in `advance` while MPI
   * calls wait or test, and from the event loop when the endpoint says one is readable.
   */
  startReceiving(ep: ShmEndpoint, spinUs: number): void {
    this.ep = ep;
    this.spinMs = spinUs / 1000;
    this.loop = this.wakeLoop();
  }

  has(proc: Proc): boolean {
    return this.peers.has(proc);
  }

  get peerList(): Proc[] {
    return [...this.peers.keys()];
  }

  // ---- sending --------------------------------------------------------------------------------

  start(req: RpiRequest): void {
    req.rpi = 0;
    const peer = this.peers.get(req.proc!)!;
    const buf = req.buf!;
    const len = buf.byteLength;
    if (len > 0xffffffff) {
      this.fail(req, new MpiError(ErrorClass.ERR_COUNT, `message of ${len} bytes exceeds 4 GiB`));
      return;
    }
    const sync = req.type === ReqType.SSEND;
    const kind = req.kind << KIND_SHIFT;
    this.sends.set(req.id, req);
    try {
      if (len > this.eagerMax) {
        // Rendezvous: the body goes when the receiver clears it (cancellable until then).
        this.stats.rendezvous++;
        this.sendEnvelope(peer, req, EnvFlag.LONG | kind, 0);
        return;
      }
      req.state = ReqState.ACTIVE;
      const flags = EnvFlag.SHORT | (sync ? EnvFlag.SSEND : 0) | kind;
      if (len <= this.inlineMax) {
        this.stats.inline++;
        const msg = this.inlineMessage(req, flags);
        if (this.ep.trySend(peer.index, msg)) this.written(req);
        else this.enqueue(peer, Buffer.from(msg), req);
        return;
      }
      this.stats.eagerTwoRecords++;
      this.sendEnvelope(peer, req, flags, 0);
      if (this.ep.trySend(peer.index, buf)) this.written(req);
      else this.enqueue(peer, buf, req);
    } catch (err) {
      this.sends.delete(req.id);
      this.fail(req, this.asMpiError(err, `send to ${req.proc!.describe()}`));
    }
  }

  /** Fast blocking send: a standard message that fits a postbox record, written now or not at all. */
  fastsend(req: RpiRequest): boolean {
    const buf = req.buf!;
    if (buf.byteLength > this.inlineMax || req.type === ReqType.SSEND) return false;
    const peer = this.peers.get(req.proc!)!;
    try {
      const sent = this.ep.trySend(
        peer.index,
        this.inlineMessage(req, EnvFlag.SHORT | (req.kind << KIND_SHIFT)),
      );
      if (sent) this.stats.inline++;
      return sent;
    } catch {
      return false; // start() reports the failure
    }
  }

  /** The record of an inline message, in `this.record` (valid until the next one is built). */
  private inlineMessage(req: RpiRequest, flags: number): Buffer {
    const buf = req.buf!;
    const msg = this.record.subarray(0, ENVELOPE_BYTES + buf.byteLength);
    writeEnvelope(msg, 0, buf.byteLength, req.tag, flags, req.myRank, req.cid, req.seq, req.id, 0);
    msg.set(buf, ENVELOPE_BYTES);
    return msg;
  }

  private sendEnvelope(peer: PeerState, req: RpiRequest, flags: number, rid: number): void {
    const { tag, myRank, cid, seq, id } = req;
    this.control(peer, req.buf!.byteLength, tag, flags, myRank, cid, seq, id, rid);
  }

  /**
   * Hands `data` to the endpoint's send queue (it did not fit the postbox now, or is a long
   * body): `reap` completes `req` (null: a control record) once it is written, whether the
   * endpoint's loop or our `flushSends` wrote it.
   */
  private enqueue(peer: PeerState, data: Uint8Array, req: RpiRequest | null): void {
    peer.queued.push(req);
    this.ep.send(peer.index, data).then(this.reapAll, req ? this.sendFailed(req) : this.lostFn);
    this.reap(peer); // the endpoint may have written it at once
  }

  /** The sends to `peer` the endpoint has written since we looked: each is `written`. */
  private reap(peer: PeerState): boolean {
    const q = peer.queued;
    const left = this.ep.queuedTo(peer.index);
    if (q.length <= left) return false;
    while (q.length > left) {
      const req = q.shift()!;
      if (req !== null) this.written(req);
    }
    return true;
  }

  private readonly reapAll = (): boolean => {
    let any = false;
    for (const peer of this.byIndex) if (peer?.queued.length && this.reap(peer)) any = true;
    return any;
  };

  private readonly lostFn = (err: unknown): void => this.lost(err);

  /** Every byte of a send is in shared memory: done, unless it waits for the receiver's ACK. */
  private written(req: RpiRequest): void {
    if (this.sends.get(req.id) !== req) return; // completed meanwhile (cancelled, failed)
    const bits = (req.rpi as number) | S_WRITTEN;
    req.rpi = bits;
    if (req.type === ReqType.SSEND && !(bits & S_ACKED)) return;
    this.sends.delete(req.id);
    this.done(req);
  }

  private sendFailed(req: RpiRequest): (err: unknown) => void {
    return (err) => {
      if (this.sends.get(req.id) !== req) return;
      this.sends.delete(req.id);
      this.fail(req, this.asMpiError(err, `send to ${req.proc!.describe()}`));
    };
  }

  private fail(req: RpiRequest, error: MpiError): void {
    req.error = error;
    this.done(req);
  }

  /**
   * The user cancelled a send: a long one not yet cleared, or a synchronous one not yet
   * acknowledged, can still come back (the receiver withdraws it if no receive took it).
   */
  cancel(req: RpiRequest): void {
    const bits = req.rpi as number;
    if (this.sends.get(req.id) !== req || bits & (S_ACKED | S_CANCELING)) return;
    const long = req.state === ReqState.START;
    if (!long && req.type !== ReqType.SSEND) return;
    req.rpi = bits | S_CANCELING;
    const peer = this.peers.get(req.proc!)!;
    this.control(peer, 0, req.tag, EnvFlag.CANCEL, req.myRank, req.cid, req.seq, req.id, 0);
  }

  /** Writes a 32-byte envelope (no payload) to `peer`. */
  private control(
    peer: PeerState,
    length: number,
    tag: number,
    flags: number,
    rank: number,
    cid: number,
    seq: number,
    sid: number,
    rid: number,
  ): void {
    const msg = this.ctl;
    writeEnvelope(msg, 0, length, tag, flags, rank, cid, seq, sid, rid);
    if (this.ep.trySend(peer.index, msg)) return;
    this.enqueue(peer, Buffer.from(msg), null);
  }

  // ---- receiving ------------------------------------------------------------------------------

  /** A receive took an unexpected message from this path (its status is recorded). */
  matched(req: RpiRequest, m: UnexpectedMessage): void {
    req.rpi = 0;
    const peer = this.peers.get(m.proc)!;
    const sid = m.extra as number;
    peer.unexpectedBySid.delete(sid);
    if (m.flags & EnvFlag.LONG) {
      this.clearToSend(peer, req, m.tag, m.length, m.seq, sid);
      return;
    }
    if (m.flags & EnvFlag.SSEND) {
      this.control(peer, 0, m.tag, EnvFlag.ACK, req.myRank, m.cid, m.seq, sid, req.id);
    }
    if (m.complete) {
      deliverBytes(req, m.data!, true);
      this.done(req);
      return;
    }
    req.state = ReqState.ACTIVE;
    m.waiting = req; // its eager body is the sender's next record: completed when it is here
  }

  /** A receive matched a long message: its body will come into `req.buf`. */
  private clearToSend(
    peer: PeerState,
    req: RpiRequest,
    tag: number,
    length: number,
    seq: number,
    sid: number,
  ): void {
    if (req.buf === null) req.buf = allocMessage(length);
    req.state = ReqState.ACTIVE;
    peer.bodies.push(req);
    this.control(
      peer,
      length,
      tag,
      EnvFlag.ACK | EnvFlag.LONG,
      req.myRank,
      req.cid,
      seq,
      sid,
      req.id,
    );
  }

  private done(req: RpiRequest): void {
    this.host.complete(req);
  }

  /**
   * Progress now, without waiting: writes what the endpoint's send queue can take, completes the
   * sends it wrote, and takes every message that is here. True when anything moved. Failures of
   * the endpoint go to the MPI layer (`peerFailed`), never to the caller.
   */
  poll(): boolean {
    if (this.closing) return false;
    try {
      let moved = this.ep.flushSends();
      moved = this.reapAll() || moved;
      for (let m = this.ep.tryRecv(ANY); m !== undefined; m = this.ep.tryRecv(ANY)) {
        this.onMessage(m.from, m.data);
        moved = true;
      }
      return moved;
    } catch (err) {
      this.lost(err);
      return true;
    }
  }

  /**
   * The rpi's `advance` (a polling module, see `RpiActions.advance`): one `poll`, and with
   * `spin` more of them until something moved or `rpi_sm_spin_us` passed. From a spin on, the
   * endpoint tells peers that we are awake, so their sends need no futex wake (`stayAwake`).
   */
  advance(spin: boolean): boolean {
    this.polledThisTurn = true;
    if (this.poll()) return true;
    if (!spin || this.spinMs <= 0 || this.closing) return false;
    const end = performance.now() + this.spinMs;
    this.stayAwake();
    for (let n = 1; ; n++) {
      if (this.poll()) return true;
      if ((n & 15) === 0 && performance.now() > end) return false;
    }
  }

  /**
   * Tells peers we are awake (no futex wake per message) until the next turn of the event loop:
   * a ping-pong of waits that complete spinning keeps it, and a rank that stops calling MPI
   * lets the endpoint's loop sleep and wake for messages again one turn later.
   */
  private stayAwake(): void {
    if (this.awake) return;
    this.awake = true;
    this.ep.holdAwake();
    setImmediate(this.letSleep);
  }

  /**
   * At the next event-loop turn: still awake if `advance` ran during the last one (the MPI
   * layer's spin-mode loop, waits that keep spinning, a test loop), else the endpoint's loop may
   * sleep again.
   * Releasing while a rank keeps spinning would make every message of its peer a futex wake
   * (and a wake-up of the helper thread on the rank's own core).
   */
  private readonly letSleep = (): void => {
    if (this.closing) return;
    if (this.polledThisTurn) {
      this.polledThisTurn = false;
      setImmediate(this.letSleep);
      return;
    }
    this.awake = false;
    this.ep.releaseAwake();
  };

  /**
   * Takes messages that come while no MPI call polls: the endpoint's loop sleeps (futex) until
   * one is readable. After a turn that took something the event loop runs once before the next
   * look, so a stream of messages never starves timers and the tcp half.
   */
  private async wakeLoop(): Promise<void> {
    try {
      for (;;) {
        await this.ep.readable();
        if (this.poll()) await new Promise<void>((r) => setImmediate(r));
      }
    } catch (err) {
      if (!this.closing) this.lost(err);
    }
  }

  /** One message from slot `from`: an eager body we wait for, a rendezvous body, or an envelope. */
  private onMessage(from: number, data: Uint8Array): void {
    const peer = this.byIndex[from];
    if (peer === undefined) throw new Error(`a message from unknown slot ${from}`);
    const waiting = peer.eagerBodyFor;
    if (waiting !== null) {
      peer.eagerBodyFor = null;
      this.onEagerBody(waiting, data);
    } else if (data.byteLength > this.eagerMax) this.onBody(peer, data);
    else this.onEnvelope(peer, data);
  }

  /** A rendezvous body: for the first receive we cleared on this pair. */
  private onBody(peer: PeerState, data: Uint8Array): void {
    const req = peer.bodies.shift();
    if (req === undefined)
      throw new Error(`an unannounced ${data.byteLength}-byte body from ${peer.proc.describe()}`);
    if (peer.bodiesStarted > 0) peer.bodiesStarted--;
    if (
      req.buf !== null &&
      data.buffer === req.buf.buffer &&
      data.byteOffset === req.buf.byteOffset
    ) {
      this.stats.bodiesDirect++;
    } else {
      deliverBytes(req, data, true);
    }
    this.done(req);
  }

  /** One envelope (with its inline payload). */
  private onEnvelope(peer: PeerState, data: Uint8Array): void {
    const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const env = this.env.read(buf, 0);
    const proto = env.flags;
    if (proto & EnvFlag.SHORT) this.onEager(peer, env, buf);
    else if (proto & EnvFlag.CANCEL) this.onCancel(peer, env);
    else if (proto & EnvFlag.ACK) this.onAck(peer, env);
    else if (proto & EnvFlag.LONG) this.onRequestToSend(peer, env);
  }

  private onEager(peer: PeerState, env: WireEnvelope, buf: Buffer): void {
    const separate = buf.byteLength === ENVELOPE_BYTES && env.length > this.inlineMax;
    const sync = (env.flags & EnvFlag.SSEND) !== 0;
    const req = this.host.matchPosted(peer.proc, env);
    if (req === null) {
      const m = new UnexpectedMessage(peer.proc, env, env.flags);
      m.extra = env.sid;
      if (sync) peer.unexpectedBySid.set(env.sid, m);
      if (!separate) {
        m.data = buf.subarray(ENVELOPE_BYTES);
        m.received = env.length;
      }
      this.host.queueUnexpected(m);
      if (separate) peer.eagerBodyFor = m;
      return;
    }
    if (sync) {
      this.control(peer, 0, env.tag, EnvFlag.ACK, req.myRank, env.cid, env.seq, env.sid, req.id);
    }
    if (!separate) {
      deliverBytes(req, buf.subarray(ENVELOPE_BYTES), true);
      this.done(req);
      return;
    }
    req.state = ReqState.ACTIVE;
    peer.eagerBodyFor = req;
  }

  /** The eager body of a posted receive, or of a queued message (delivered if one took it). */
  private onEagerBody(to: RpiRequest | UnexpectedMessage, data: Uint8Array): void {
    let req: RpiRequest | null;
    if (to instanceof UnexpectedMessage) {
      to.data = data;
      to.received = to.length;
      req = to.waiting;
      if (req === null) return;
      to.waiting = null;
    } else req = to;
    deliverBytes(req, data, true);
    this.done(req);
  }

  private onRequestToSend(peer: PeerState, env: WireEnvelope): void {
    const req = this.host.matchPosted(peer.proc, env);
    if (req !== null) {
      this.clearToSend(peer, req, env.tag, env.length, env.seq, env.sid);
      return;
    }
    const m = new UnexpectedMessage(peer.proc, env, env.flags);
    m.extra = env.sid;
    peer.unexpectedBySid.set(env.sid, m);
    this.host.queueUnexpected(m);
  }

  /** An ACK: clear to send (the body goes now), or the receipt of a synchronous send. */
  private onAck(peer: PeerState, env: WireEnvelope): void {
    const req = this.sends.get(env.sid);
    if (req === undefined || req.proc !== peer.proc) return;
    req.rpi = ((req.rpi as number) | S_ACKED) & ~S_CANCELING;
    if (env.flags & EnvFlag.LONG) {
      req.state = ReqState.ACTIVE;
      this.enqueue(peer, req.buf!, req);
      return;
    }
    if ((req.rpi as number) & S_WRITTEN) {
      this.sends.delete(env.sid);
      this.done(req);
    }
  }

  private onCancel(peer: PeerState, env: WireEnvelope): void {
    const { tag, cid, seq, sid } = env;
    if (!(env.flags & EnvFlag.ACK)) {
      // The sender asks to take message `sid` back: possible while no receive has matched it.
      const m = peer.unexpectedBySid.get(sid);
      const ok = m !== undefined && this.host.withdrawUnexpected(m);
      if (ok) peer.unexpectedBySid.delete(sid);
      const reply = EnvFlag.CANCEL | EnvFlag.ACK | (ok ? EnvFlag.CANCELLED : 0);
      this.control(peer, 0, tag, reply, env.rank, cid, seq, sid, 0);
      return;
    }
    const req = this.sends.get(sid);
    if (req === undefined) return;
    req.rpi = (req.rpi as number) & ~S_CANCELING;
    if (env.flags & EnvFlag.CANCELLED) {
      this.sends.delete(sid);
      req.cancelled = true;
      this.done(req);
    }
  }

  // ---- failure and shutdown -------------------------------------------------------------------

  /** The endpoint failed (a peer died, the segment broke): tell the MPI layer which peers. */
  private lost(err: unknown): void {
    if (this.closing) return;
    const reason = `rpi sm: ${(err as Error)?.message ?? String(err)}`;
    const dead = this.peerList.filter((p) => !isProcessAlive(p.gps.pid));
    for (const p of dead.length > 0 ? dead : this.peerList) this.host.peerFailed(p, reason);
  }

  private asMpiError(err: unknown, what: string): MpiError {
    if (err instanceof MpiError) return err;
    return new MpiError(ErrorClass.ERR_OTHER, `rpi sm: ${what}: ${(err as Error)?.message ?? err}`);
  }

  destroy(req: RpiRequest): void {
    if (req.isSend) this.sends.delete(req.id);
    req.rpi = 0;
  }

  /** Stops the endpoint and the loop, then `closeSegment` (the creator's close unlinks). */
  async finalize(closeSegment: () => void): Promise<void> {
    this.closing = true;
    this.ep.close();
    await this.loop;
    closeSegment();
  }

  /** For `rpi_verbose 10` at finalize (the tests read it). */
  describeStats(): string {
    const s = this.stats;
    return (
      `sm messages sent inline ${s.inline}, eager in two records ${s.eagerTwoRecords}, ` +
      `by rendezvous ${s.rendezvous}; rendezvous bodies received straight into the receive buffer ` +
      `${s.bodiesDirect}`
    );
  }
}
