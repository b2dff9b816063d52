import type { Proc, RpiHost, RpiRequest, WireEnvelope } from '@ssi/mpi';
import { allocMessage, deliverBytes, EnvFlag, ReqState, UnexpectedMessage } from '@ssi/mpi';
import type { Connection } from './connection';
import type { TcpSettings } from './settings';

/**
 * The receiving side of the tcp protocol, for one transport. Every arriving message is handed
 * to the MPI layer's matching (`host.matchPosted`); what matched nothing is queued there
 * (`host.queueUnexpected`). Eager payloads are read into the matched receive's buffer, or into
 * memory of the unexpected message; a request to send that matched is answered with a clear to
 * send and its body read into the receive (directly, see `Connection`); a long receive posted
 * before its message came grants the sender a credit.
 */
export class ReceiveSide {
  /** Receives that sent a clear-to-send and wait for the rendezvous body, by id. */
  private readonly bodies = new Map<number, RpiRequest>();

  constructor(
    private readonly host: RpiHost,
    private readonly settings: TcpSettings,
    /** The established connection to `proc`, if any. */
    private readonly connectionOf: (proc: Proc) => Connection | undefined,
  ) {}

  private get myRank(): number {
    return this.host.myProc.gps.grank;
  }

  /** An eager message: into the receive it matches, or queued as unexpected. */
  onEager(conn: Connection, env: WireEnvelope): void {
    const proc = conn.proc!;
    conn.credits.countReceived();
    const req = this.host.matchPosted(proc, env);
    if (req === null) {
      this.queueEager(conn, proc, env);
      return;
    }
    const { tag, cid, seq, sid, length } = env;
    this.settleCredit(req);
    if (env.flags & EnvFlag.SSEND) {
      conn.out.writeSmall(0, tag, EnvFlag.ACK, this.myRank, cid, seq, sid, req.id, null);
    }
    if (req.buf === null && req.scatter === null) req.buf = allocMessage(length);
    if (length === 0) this.host.complete(req);
    else {
      req.state = ReqState.ACTIVE;
      this.expectFor(conn, req, length);
    }
  }

  /** A request to send: answered when it matches a receive, else queued as unexpected. */
  onRequestToSend(conn: Connection, env: WireEnvelope): void {
    const proc = conn.proc!;
    conn.credits.countReceived();
    const req = this.host.matchPosted(proc, env);
    if (req !== null) {
      this.settleCredit(req);
      this.acceptLong(conn, req, env.tag, env.length, env.seq, env.sid);
      return;
    }
    const m = new UnexpectedMessage(proc, env, env.flags);
    m.extra = env.sid;
    conn.unexpectedBySid.set(env.sid, m);
    this.host.queueUnexpected(m);
  }

  /** The body of `length` bytes for a matched receive comes next: into its buffer or layout. */
  private expectFor(conn: Connection, req: RpiRequest, length: number): void {
    if (req.scatter !== null) conn.expectScatter(req, req.stLength, length);
    else conn.expectBody(req.buf, req.stLength, length, req, null);
  }

  /** An eager message no receive was posted for: buffered, queued with the MPI layer. */
  private queueEager(conn: Connection, proc: Proc, env: WireEnvelope): void {
    const m = new UnexpectedMessage(proc, env, env.flags);
    m.extra = env.sid;
    m.data = allocMessage(env.length);
    if (env.flags & EnvFlag.SSEND) conn.unexpectedBySid.set(env.sid, m);
    if (env.length > 0) conn.expectBody(m.data, env.length, env.length, null, m);
    this.host.queueUnexpected(m);
  }

  /**
   * A rendezvous body: for the receive that answered its request to send, or, when it came on a
   * crossing credit before any receive matched the request, for the unexpected message.
   */
  onBody(conn: Connection, length: number, sid: number): void {
    const rid = conn.takeAnswered(sid);
    const req = rid === 0 ? undefined : this.bodies.get(rid);
    if (req !== undefined) {
      this.bodies.delete(rid);
      if (length === 0) this.host.complete(req);
      else this.expectFor(conn, req, length);
      return;
    }
    const m = rid === 0 ? conn.unexpectedBySid.get(sid) : undefined;
    if (m === undefined || m.data !== null) {
      conn.expectBody(null, 0, length, null, null); // cancelled or failed meanwhile: drop
      return;
    }
    // From now on the message is buffered like an eager one.
    conn.unexpectedBySid.delete(sid);
    m.data = allocMessage(length);
    conn.expectBody(m.data, length, length, null, m);
  }

  /** A body read into a posted receive is complete. */
  bodyDone(req: RpiRequest): void {
    this.host.complete(req);
  }

  /** A body read into an unexpected message is complete: a receive waiting for it is done. */
  unexpectedDone(m: UnexpectedMessage): void {
    const req = m.waiting;
    if (req === null) return;
    m.waiting = null;
    if (req.buf !== m.data) deliverBytes(req, m.data!, true);
    this.host.complete(req);
  }

  /**
   * A receive posted before its message arrived: if a long message may fill it, tell the sender,
   * so that the message comes at once instead of asking first. Only for one named peer (an
   * ANY_SOURCE receive cannot know who to tell) and a buffer of known size.
   */
  posted(req: RpiRequest): void {
    req.rpi = 0;
    const proc = req.proc;
    const room = req.buf?.byteLength ?? req.scatter?.length ?? -1;
    if (!this.settings.credits || proc === null || room < 0) return;
    if (room <= this.settings.short || proc === this.host.myProc) return;
    const conn = this.connectionOf(proc);
    if (conn === undefined) return;
    const credits = conn.credits;
    const id = credits.grant();
    req.rpi = id;
    const { tag, cid } = req;
    conn.out.writeSmall(room, tag, EnvFlag.READY, this.myRank, cid, credits.received, 0, id, null);
  }

  /** A cancelled receive's credit: the sender must not use it (if it has, the message is buffered). */
  unposted(req: RpiRequest): void {
    const id = this.settleCredit(req);
    if (id === 0) return;
    const { tag, cid } = req;
    const flags = EnvFlag.READY | EnvFlag.CANCEL;
    this.connectionOf(req.proc!)?.out.writeSmall(0, tag, flags, this.myRank, cid, 0, 0, id, null);
  }

  /** A receive holding a credit matched, was cancelled or went away: the credit is used up. */
  private settleCredit(req: RpiRequest): number {
    const id = req.rpi as number;
    if (!id) return 0;
    req.rpi = 0;
    this.connectionOf(req.proc!)?.credits.settle();
    return id;
  }

  /**
   * A receive took an unexpected message this module queued (its status is recorded): answer a
   * request to send, acknowledge a synchronous send, deliver the payload or redirect the rest of
   * it into the receive buffer.
   */
  matched(req: RpiRequest, m: UnexpectedMessage): void {
    req.rpi = 0;
    const conn = this.connectionOf(m.proc)!;
    const sid = m.extra as number;
    if (m.flags & (EnvFlag.LONG | EnvFlag.SSEND)) conn.unexpectedBySid.delete(sid);
    if (m.flags & EnvFlag.LONG && m.data === null) {
      this.acceptLong(conn, req, m.tag, m.length, m.seq, sid);
      return;
    }
    // An eager message, or a request to send whose body came on a crossing credit.
    if (m.flags & EnvFlag.SSEND) {
      conn.out.writeSmall(0, m.tag, EnvFlag.ACK, this.myRank, m.cid, m.seq, sid, req.id, null);
    }
    if (m.complete) {
      deliverBytes(req, m.data!, true);
      this.host.complete(req);
      return;
    }
    // The payload is still arriving: redirect the rest into the receive buffer when it has one.
    req.state = ReqState.ACTIVE;
    if (req.buf === null && req.scatter === null) {
      req.buf = m.data;
      m.waiting = req;
      return;
    }
    if (!conn.redirectBody(m, req, req.stLength)) m.waiting = req;
  }

  /** Matched a rendezvous request (status recorded): send the clear to send. */
  private acceptLong(
    conn: Connection,
    req: RpiRequest,
    tag: number,
    length: number,
    seq: number,
    sid: number,
  ): void {
    if (req.buf === null && req.scatter === null) req.buf = allocMessage(length);
    req.state = ReqState.ACTIVE;
    this.bodies.set(req.id, req);
    conn.answered(sid, req.id);
    const flags = EnvFlag.ACK | EnvFlag.LONG;
    conn.out.writeSmall(length, tag, flags, this.myRank, req.cid, seq, sid, req.id, null);
  }

  /** The sender asks to take message `sid` back: possible while no receive has matched it. */
  onCancelRequest(conn: Connection, env: WireEnvelope): void {
    const { tag, cid, seq, sid } = env;
    const m = conn.unexpectedBySid.get(sid);
    const ok = m !== undefined && this.host.withdrawUnexpected(m);
    if (ok) conn.unexpectedBySid.delete(sid);
    const reply = EnvFlag.CANCEL | EnvFlag.ACK | (ok ? EnvFlag.CANCELLED : 0);
    conn.out.writeSmall(0, tag, reply, this.myRank, cid, seq, sid, 0, null);
  }

  /** The request goes away (destroyed): no body is awaited for it, its credit is settled. */
  forget(req: RpiRequest): void {
    this.bodies.delete(req.id);
    this.settleCredit(req);
  }

  /** The peer is lost: no body will come from it. */
  forgetPeer(proc: Proc): void {
    for (const [id, req] of this.bodies) if (req.proc === proc) this.bodies.delete(id);
  }
}
