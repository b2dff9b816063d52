import type { Proc, RpiHost, RpiRequest } from '@ssi/mpi';
import {
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
import { ANY, isProcessAlive, type Message, type ShmEndpoint } from '@ssi/shm';

/** Bits of `req.rpi` for on-node sends. */
const S_WRITTEN = 1; // every byte is in shared memory
const S_ACKED = 2; // the receiver matched it (synchronous mode)
const S_CANCELING = 4; // a cancel request is on its way

/** Per peer: the queued synchronous messages (for the acknowledgement and cancel), by sender id. */
interface PeerState {
  readonly proc: Proc;
  readonly index: number;
  readonly unexpectedBySid: Map<number, UnexpectedMessage>;
}

/**
 * The on-node path of the sm rpi: MPI messages between the processes of one node through their
 * segment's endpoint (postboxes and pool of `@ssi/shm`, in order per pair).
 *
 * Wire: every shm message starts with the 32-byte envelope of `@ssi/mpi` (`writeEnvelope`, the
 * framing tcp uses, `seq` included). An eager message whose envelope and payload fit a postbox
 * travels as one record; a longer payload follows its envelope as the next message of the pair
 * (through the pool), so per-pair order is the endpoint's. Synchronous sends wait for an ACK
 * envelope; a cancel asks the receiver to withdraw a synchronous message it has not matched.
 *
 * Receiving: one loop takes the endpoint's messages from any peer in arrival order and hands each
 * envelope to the MPI layer (`matchPosted`, else `queueUnexpected`); a long body is received
 * straight into the matched receive's buffer when it has not arrived yet.
 */
export class SmPath {
  private readonly peers = new Map<Proc, PeerState>();
  private readonly byIndex: (PeerState | undefined)[] = [];
  /** Sends waiting for their bytes to be written or for the receiver's acknowledgement, by id. */
  private readonly sends = new Map<number, RpiRequest>();
  private readonly env = new WireEnvelope();
  private readonly ctl = Buffer.alloc(ENVELOPE_BYTES);
  /** Largest payload that travels in the envelope's postbox record. */
  readonly inlineMax: number;
  private closing = false;
  private loop: Promise<void> = Promise.resolve();
  readonly stats = { inline: 0, bodies: 0, bodiesDirect: 0 };

  constructor(
    private readonly host: RpiHost,
    private readonly ep: ShmEndpoint,
    localProcs: readonly Proc[],
    /** Closes the segment once the endpoint stopped (the creator's close unlinks a name left). */
    private readonly closeSegment: () => void,
  ) {
    this.inlineMax = ep.shortLimit - ENVELOPE_BYTES;
    localProcs.forEach((proc, index) => {
      if (proc === host.myProc) return;
      const st: PeerState = { proc, index, unexpectedBySid: new Map() };
      this.peers.set(proc, st);
      this.byIndex[index] = st;
    });
  }

  has(proc: Proc): boolean {
    return this.peers.has(proc);
  }

  get peerList(): Proc[] {
    return [...this.peers.keys()];
  }

  /** Starts the receive loop (once the whole rpi is set up). */
  startReceiving(): void {
    this.loop = this.receiveLoop();
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
    const flags = EnvFlag.SHORT | (sync ? EnvFlag.SSEND : 0) | (req.kind << KIND_SHIFT);
    this.sends.set(req.id, req);
    req.state = ReqState.ACTIVE;
    try {
      if (len <= this.inlineMax) {
        const msg = this.inlineMessage(req, flags);
        this.stats.inline++;
        if (this.ep.trySend(peer.index, msg)) this.written(req);
        else this.ep.send(peer.index, msg).then(() => this.written(req), this.sendFailed(req));
        return;
      }
      const env = Buffer.allocUnsafe(ENVELOPE_BYTES);
      writeEnvelope(env, 0, len, req.tag, flags, req.myRank, req.cid, req.seq, req.id, 0);
      this.stats.bodies++;
      // Both in the same tick: nothing else of this process can come between them on the pair.
      this.ep.send(peer.index, env).catch(this.sendFailed(req));
      this.ep.send(peer.index, buf).then(() => this.written(req), this.sendFailed(req));
    } catch (err) {
      this.sends.delete(req.id);
      this.fail(req, this.asMpiError(err, `send to ${req.proc!.describe()}`));
    }
  }

  /** Fast blocking send: a standard message that fits a postbox, written now or not at all. */
  fastsend(req: RpiRequest): boolean {
    const buf = req.buf!;
    if (buf.byteLength > this.inlineMax || req.type === ReqType.SSEND) return false;
    const peer = this.peers.get(req.proc!)!;
    const msg = this.inlineMessage(req, EnvFlag.SHORT | (req.kind << KIND_SHIFT));
    try {
      return this.ep.trySend(peer.index, msg);
    } catch {
      return false; // start() reports the failure
    }
  }

  private inlineMessage(req: RpiRequest, flags: number): Buffer {
    const buf = req.buf!;
    const msg = Buffer.allocUnsafe(ENVELOPE_BYTES + buf.byteLength);
    writeEnvelope(msg, 0, buf.byteLength, req.tag, flags, req.myRank, req.cid, req.seq, req.id, 0);
    msg.set(buf, ENVELOPE_BYTES);
    return msg;
  }

  /** Every byte of a send is in shared memory: done, unless it waits for the receiver's ACK. */
  private written(req: RpiRequest): void {
    if (this.sends.get(req.id) !== req) return; // completed meanwhile (cancelled, failed)
    const bits = (req.rpi as number) | S_WRITTEN;
    req.rpi = bits;
    if (req.type === ReqType.SSEND && !(bits & S_ACKED)) return;
    this.sends.delete(req.id);
    this.host.complete(req);
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
    this.host.complete(req);
  }

  /** The user cancelled a send: only a synchronous one still waiting for its ACK can come back. */
  cancel(req: RpiRequest): void {
    const bits = req.rpi as number;
    if (this.sends.get(req.id) !== req || req.type !== ReqType.SSEND) return;
    if (bits & (S_ACKED | S_CANCELING)) return;
    req.rpi = bits | S_CANCELING;
    this.control(
      this.peers.get(req.proc!)!,
      0,
      req.tag,
      EnvFlag.CANCEL,
      req.myRank,
      req.cid,
      req.seq,
      req.id,
      0,
    );
  }

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
    this.ep.send(peer.index, Buffer.from(msg)).catch((err) => this.lost(err));
  }

  // ---- receiving ------------------------------------------------------------------------------

  /** A receive took an unexpected message from this path (its status is recorded). */
  matched(req: RpiRequest, m: UnexpectedMessage): void {
    req.rpi = 0;
    const peer = this.peers.get(m.proc)!;
    if (m.flags & EnvFlag.SSEND) {
      peer.unexpectedBySid.delete(m.extra as number);
      this.control(
        peer,
        0,
        m.tag,
        EnvFlag.ACK,
        req.myRank,
        m.cid,
        m.seq,
        m.extra as number,
        req.id,
      );
    }
    if (m.complete) {
      deliverBytes(req, m.data!, true);
      this.host.complete(req);
      return;
    }
    req.state = ReqState.ACTIVE;
    m.waiting = req; // the body is still coming: completed when it is here
  }

  private async receiveLoop(): Promise<void> {
    try {
      for (;;) {
        const m = await this.ep.recv(ANY);
        const peer = this.byIndex[m.from];
        if (peer === undefined) throw new Error(`a message from unknown slot ${m.from}`);
        const body = this.onEnvelope(peer, m.data);
        if (body) await body;
      }
    } catch (err) {
      if (!this.closing) this.lost(err);
    }
  }

  /** One envelope (with its inline payload): returns a promise when a body must be received. */
  private onEnvelope(peer: PeerState, data: Uint8Array): Promise<void> | undefined {
    const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const env = this.env.read(buf, 0);
    const proto = env.flags;
    if (proto & EnvFlag.SHORT) return this.onMessage(peer, env, buf);
    if (proto & EnvFlag.CANCEL) this.onCancel(peer, env);
    else if (proto & EnvFlag.ACK) this.onAck(env.sid);
    return undefined;
  }

  private onMessage(peer: PeerState, env: WireEnvelope, buf: Buffer): Promise<void> | undefined {
    const inline = buf.byteLength - ENVELOPE_BYTES;
    const hasBody = inline !== env.length;
    const sync = (env.flags & EnvFlag.SSEND) !== 0;
    const req = this.host.matchPosted(peer.proc, env);
    if (req === null) {
      const m = new UnexpectedMessage(peer.proc, env, env.flags);
      m.extra = env.sid;
      if (sync) peer.unexpectedBySid.set(env.sid, m);
      if (!hasBody) {
        m.data = buf.subarray(ENVELOPE_BYTES);
        m.received = env.length;
        this.host.queueUnexpected(m);
        return undefined;
      }
      this.host.queueUnexpected(m);
      return this.bodyOfUnexpected(peer, m);
    }
    if (sync) {
      this.control(peer, 0, env.tag, EnvFlag.ACK, req.myRank, env.cid, env.seq, env.sid, req.id);
    }
    if (!hasBody) {
      deliverBytes(req, buf.subarray(ENVELOPE_BYTES), true);
      this.host.complete(req);
      return undefined;
    }
    req.state = ReqState.ACTIVE;
    return this.bodyOfPosted(peer, req, env.length);
  }

  /** The body of a message a posted receive matched: into its buffer when it fits exactly. */
  private async bodyOfPosted(peer: PeerState, req: RpiRequest, length: number): Promise<void> {
    const n = req.stLength;
    const into = req.buf !== null && n === length ? req.buf.subarray(0, n) : undefined;
    const body = await this.ep.recv(peer.index, { into });
    if (
      into !== undefined &&
      body.data.buffer === into.buffer &&
      body.data.byteOffset === into.byteOffset
    ) {
      this.stats.bodiesDirect++;
    } else {
      deliverBytes(req, body.data, true);
    }
    this.host.complete(req);
  }

  private async bodyOfUnexpected(peer: PeerState, m: UnexpectedMessage): Promise<void> {
    const body = await this.ep.recv(peer.index);
    m.data = body.data;
    m.received = m.length;
    const req = m.waiting;
    if (req === null) return;
    m.waiting = null;
    deliverBytes(req, m.data, true);
    this.host.complete(req);
  }

  private onAck(sid: number): void {
    const req = this.sends.get(sid);
    if (req === undefined) return;
    const bits = (req.rpi as number) | S_ACKED;
    req.rpi = bits;
    if (bits & S_WRITTEN) {
      this.sends.delete(sid);
      this.host.complete(req);
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
      this.host.complete(req);
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

  async finalize(): Promise<void> {
    this.closing = true;
    this.ep.close();
    await this.loop;
    this.closeSegment();
  }

  /** For `rpi_verbose 10` at finalize (the tests read it). */
  describeStats(): string {
    const s = this.stats;
    return (
      `sm messages sent inline ${s.inline}, with a pool body ${s.bodies}; ` +
      `pool bodies received straight into posted receives ${s.bodiesDirect}`
    );
  }
}
