import type { RpiHost, RpiRequest } from '@ssi/mpi';
import {
  allocMessage,
  deliverBytes,
  ENVELOPE_BYTES,
  EnvFlag,
  ReqState,
  UnexpectedMessage,
  WireEnvelope,
} from '@ssi/mpi';
import type { PeerState, PeerTable } from './peer-state';
import { SHARED, type SingleCopy, TAKEN } from './single-copy';
import type { SmLimits, SmSends } from './sm-sends';
import type { SmStats } from './sm-stats';

/**
 * The receiving side of the sm path: every record a peer wrote (`onMessage`), and receives that
 * match a queued message (`matched`). Matching is the MPI layer's (`host.matchPosted`, else
 * `host.queueUnexpected`); this side finishes the transfer: eager payloads, the bodies of long
 * messages (read from the sender's memory, or cleared and coming through the pool), and the
 * ACKs and cancel requests the protocol needs.
 */
export class SmReceives {
  private readonly env = new WireEnvelope();
  /** Receives whose head we read while the sender writes the tail (SHARED), by request id. */
  private readonly sharing = new Map<number, SharedBody>();

  constructor(
    private readonly host: RpiHost,
    private readonly peers: PeerTable,
    private readonly limits: SmLimits,
    private readonly sends: SmSends,
    private readonly single: SingleCopy,
    private readonly stats: SmStats,
  ) {}

  /** For the endpoint's options: the buffer a sender's next large message (a body) goes into. */
  intoFor(from: number, length: number): Uint8Array | undefined {
    const peer = this.peers.bySlot[from];
    const req = peer?.bodies[peer.bodiesStarted];
    if (peer === undefined || req === undefined) return undefined;
    peer.bodiesStarted++;
    return req.buf !== null && req.stLength === length ? req.buf : undefined;
  }

  /** A receive took an unexpected message from this path (its status is recorded). */
  matched(req: RpiRequest, m: UnexpectedMessage): void {
    req.rpi = 0;
    const peer = this.peers.of(m.proc);
    const sid = m.extra as number;
    peer.unexpectedBySid.delete(sid);
    if (m.flags & EnvFlag.LONG) {
      const address = peer.offers.get(sid) ?? -1;
      if (address !== -1) peer.offers.delete(sid);
      this.takeLong(peer, req, m.tag, m.length, m.seq, sid, address);
      return;
    }
    if (m.flags & EnvFlag.SSEND) {
      this.sends.control(peer, 0, m.tag, EnvFlag.ACK, req.myRank, m.cid, m.seq, sid, req.id);
    }
    if (m.complete) {
      deliverBytes(req, m.data!, true);
      this.host.complete(req);
      return;
    }
    req.state = ReqState.ACTIVE;
    m.waiting = req; // its eager body is the sender's next record: completed when it is here
  }

  /**
   * A receive matched a long message: its body is read out of the sender's memory when it
   * offered that (`address` >= 0) and the kernel lets us, else it will come through the pool
   * into `req.buf` after our clear to send.
   */
  private takeLong(
    peer: PeerState,
    req: RpiRequest,
    tag: number,
    length: number,
    seq: number,
    sid: number,
    address: number,
  ): void {
    if (req.buf === null) req.buf = allocMessage(length);
    req.state = ReqState.ACTIVE;
    const into = req.stLength === req.buf.byteLength ? req.buf : req.buf.subarray(0, req.stLength);
    const pid = peer.proc.gps.pid;
    const probed = address >= 0 ? this.single.probe(pid, address, into) : -1;
    if (probed >= 0) {
      const head = this.single.splitPoint(into.byteLength);
      const body: SharedBody = { req, peer, tag, length, seq, sid, address, into, head };
      if (head < into.byteLength) {
        // the sender writes [head, end) into our buffer while we read [0, head)
        this.sharing.set(req.id, body);
        const tailAddress = this.single.addressOf(into.subarray(head));
        const env = {
          length: into.byteLength - head,
          tag,
          flags: SHARED,
          rank: req.myRank,
          cid: req.cid,
          seq,
        };
        this.sends.controlWith(peer, env, sid, req.id, tailAddress, head);
      }
      this.readRange(body, probed, head);
      if (head === into.byteLength) this.bodyTaken(body);
      return;
    }
    peer.bodies.push(req);
    const flags = EnvFlag.ACK | EnvFlag.LONG;
    this.sends.control(peer, length, tag, flags, req.myRank, req.cid, seq, sid, req.id);
  }

  /** Copies bytes [from, to) of a long body out of the sender's memory into the receive buffer. */
  private readRange(b: SharedBody, from: number, to: number): void {
    if (to <= from) return;
    const part = b.into.subarray(from, to);
    if (!this.single.take(b.peer.proc.gps.pid, b.address + from, part)) {
      throw new Error(
        `cannot read the body of a long message from ${b.peer.proc.describe()}: ${this.single.reason}`,
      );
    }
  }

  /** Every byte of a long body is in the receive buffer: the sender may reuse its own. */
  private bodyTaken(b: SharedBody): void {
    const { req, peer, length, tag, seq, sid } = b;
    this.stats.bodiesRead++;
    this.sends.control(peer, length, tag, TAKEN, req.myRank, req.cid, seq, sid, req.id);
    this.host.complete(req);
  }

  /** The sender wrote the tail of a shared body (or could not: then we read it ourselves). */
  private onWrote(env: WireEnvelope): void {
    const b = this.sharing.get(env.rid);
    if (b === undefined) return;
    this.sharing.delete(env.rid);
    if (env.flags & EnvFlag.CANCELLED) this.readRange(b, b.head, b.into.byteLength);
    else this.stats.bodiesShared++;
    this.bodyTaken(b);
  }

  /**
   * One message from slot `from`: an eager body we wait for, a rendezvous body, or an envelope.
   * `inPlace`: `data` is the record in the postbox, valid during this call only: a payload a
   * posted receive takes is copied once, from there into its buffer; one that is kept (an
   * unexpected message) is copied out.
   */
  onMessage(from: number, data: Uint8Array, inPlace: boolean): void {
    const peer = this.peers.bySlot[from];
    if (peer === undefined) throw new Error(`a message from unknown slot ${from}`);
    const waiting = peer.eagerBodyFor;
    if (waiting !== null) {
      peer.eagerBodyFor = null;
      this.onEagerBody(waiting, data, inPlace);
    } else if (data.byteLength > this.limits.eagerMax) this.onBody(peer, data, inPlace);
    else this.onEnvelope(peer, data, inPlace);
  }

  /** A rendezvous body: for the first receive we cleared on this pair. */
  private onBody(peer: PeerState, data: Uint8Array, inPlace: boolean): void {
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
      deliverBytes(req, data, !inPlace);
    }
    this.host.complete(req);
  }

  /** One envelope (with its inline payload, or a request to send's offer). */
  private onEnvelope(peer: PeerState, data: Uint8Array, inPlace: boolean): void {
    const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const env = this.env.read(buf, 0);
    const proto = env.flags;
    if (proto & EnvFlag.SHORT) this.onEager(peer, env, buf, inPlace);
    else if (proto & EnvFlag.CANCEL) this.onCancel(peer, env);
    else if (proto & EnvFlag.ACK) this.sends.onAck(peer, env, buf);
    else if (proto & EnvFlag.SECOND) this.onWrote(env);
    else if (proto & EnvFlag.LONG) this.onRequestToSend(peer, env, this.single.offered(buf));
  }

  private onEager(peer: PeerState, env: WireEnvelope, buf: Buffer, inPlace: boolean): void {
    const separate = buf.byteLength === ENVELOPE_BYTES && env.length > this.limits.inlineMax;
    const sync = (env.flags & EnvFlag.SSEND) !== 0;
    const req = this.host.matchPosted(peer.proc, env);
    if (req === null) {
      const m = new UnexpectedMessage(peer.proc, env, env.flags);
      m.extra = env.sid;
      if (sync) peer.unexpectedBySid.set(env.sid, m);
      if (!separate) {
        const payload = buf.subarray(ENVELOPE_BYTES);
        m.data = inPlace ? copyOf(payload) : payload;
        m.received = env.length;
      }
      this.host.queueUnexpected(m);
      if (separate) peer.eagerBodyFor = m;
      return;
    }
    if (sync) {
      const { tag, cid, seq, sid } = env;
      this.sends.control(peer, 0, tag, EnvFlag.ACK, req.myRank, cid, seq, sid, req.id);
    }
    if (!separate) {
      deliverBytes(req, buf.subarray(ENVELOPE_BYTES), !inPlace);
      this.host.complete(req);
      return;
    }
    req.state = ReqState.ACTIVE;
    peer.eagerBodyFor = req;
  }

  /** The eager body of a posted receive, or of a queued message (delivered if one took it). */
  private onEagerBody(
    to: RpiRequest | UnexpectedMessage,
    data: Uint8Array,
    inPlace: boolean,
  ): void {
    let req: RpiRequest | null;
    let body = data;
    if (to instanceof UnexpectedMessage) {
      body = inPlace ? copyOf(data) : data;
      to.data = body;
      to.received = to.length;
      req = to.waiting;
      if (req === null) return;
      to.waiting = null;
    } else req = to;
    deliverBytes(req, body, body !== data || !inPlace);
    this.host.complete(req);
  }

  /** A request to send; `address` is where the body lives in the sender (-1: no offer). */
  private onRequestToSend(peer: PeerState, env: WireEnvelope, address: number): void {
    const req = this.host.matchPosted(peer.proc, env);
    if (req !== null) {
      this.takeLong(peer, req, env.tag, env.length, env.seq, env.sid, address);
      return;
    }
    const m = new UnexpectedMessage(peer.proc, env, env.flags);
    m.extra = env.sid;
    peer.unexpectedBySid.set(env.sid, m);
    if (address >= 0) peer.offers.set(env.sid, address);
    this.host.queueUnexpected(m);
  }

  /** A cancel request of the sender, or the answer to one of ours. */
  private onCancel(peer: PeerState, env: WireEnvelope): void {
    if (env.flags & EnvFlag.ACK) {
      this.sends.onCancelReply(env);
      return;
    }
    // The sender asks to take message `sid` back: possible while no receive has matched it.
    const { tag, cid, seq, sid } = env;
    const m = peer.unexpectedBySid.get(sid);
    const ok = m !== undefined && this.host.withdrawUnexpected(m);
    if (ok) {
      peer.unexpectedBySid.delete(sid);
      peer.offers.delete(sid);
    }
    const reply = EnvFlag.CANCEL | EnvFlag.ACK | (ok ? EnvFlag.CANCELLED : 0);
    this.sends.control(peer, 0, tag, reply, env.rank, cid, seq, sid, 0);
  }
}

/** A private copy of `view` (a view of shared memory that is about to be reused). */
function copyOf(view: Uint8Array): Uint8Array {
  const copy = new Uint8Array(view.byteLength);
  copy.set(view);
  return copy;
}

/** A long body being copied out of the sender's memory into `into` (the receive's bytes). */
interface SharedBody {
  readonly req: RpiRequest;
  readonly peer: PeerState;
  readonly tag: number;
  readonly length: number;
  readonly seq: number;
  readonly sid: number;
  /** The body's address in the sender. */
  readonly address: number;
  readonly into: Uint8Array;
  /** Bytes [0, head) are ours to read; [head, end) the sender writes (SHARED). */
  readonly head: number;
}
