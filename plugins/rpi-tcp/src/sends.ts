import type { RpiHost, RpiRequest, WireEnvelope } from '@ssi/mpi';
import { EnvFlag, ErrorClass, KIND_SHIFT, MpiError, ReqState, ReqType } from '@ssi/mpi';
import type { Connection } from './connection';
import type { Payload } from './connection-writer';
import type { TcpSettings } from './settings';

/** Bits of `req.rpi` for sends that wait for the network or the receiver. */
const S_FLUSHED = 1; // payload handed to the kernel
const S_ACKED = 2; // receiver acknowledged (synchronous mode)
const S_NEED_ACK = 4; // synchronous mode: completion needs the acknowledgement
const S_CANCELING = 8; // a cancel request is on its way to the receiver
const S_UNASKED = 16; // the body went on a credit that crossed the request to send

/** Bytes of a send: its buffer's, or the total of its gather ranges (`req.buf` is null then). */
export function sendLength(req: RpiRequest): number {
  return req.gather === null ? req.buf!.byteLength : req.gatherLength;
}

/**
 * The sending side of the tcp protocol, for one transport: eager sends up to `rpi_tcp_short`
 * (copied next to the envelope up to `rpi_tcp_copy_limit`, else written from the user's buffer
 * and done once flushed), rendezvous above (request to send → clear to send → body, or at once on
 * a credit the receiver granted, or right after the request when a credit crossed it),
 * synchronous acknowledgements and cancellation of sends the receiver has not matched.
 */
export class SendSide {
  /** Sends waiting for a clear-to-send, a synchronous acknowledgement or a flush, by id. */
  readonly waiting = new Map<number, RpiRequest>();
  /** Long messages sent: on a credit, on a credit that crossed the request, after a clear to send. */
  private creditedSends = 0;
  private crossedSends = 0;
  private askedSends = 0;
  /** Sends written from ranges of the user's buffer (gather), and those ranges. */
  private gatheredSends = 0;
  private gatheredRanges = 0;

  constructor(
    private readonly host: RpiHost,
    private readonly settings: TcpSettings,
  ) {}

  /** A send to the peer of `conn` (connected, alive): eager, on a credit, or a request to send. */
  start(conn: Connection, req: RpiRequest): void {
    const len = sendLength(req);
    if (len > 0xffffffff) {
      req.error = new MpiError(ErrorClass.ERR_COUNT, `message of ${len} bytes exceeds 4 GiB`);
      this.host.complete(req);
      return;
    }
    const kindBits = req.kind << KIND_SHIFT;
    const sync = req.type === ReqType.SSEND;
    if (len > this.settings.short) {
      const credit = conn.credits.takeFor(req.cid, req.tag, len, req);
      if (credit !== 0) {
        this.creditedSends++;
        const flags = EnvFlag.SHORT | (sync ? EnvFlag.SSEND : 0) | kindBits;
        this.sendEagerTracked(conn, req, flags, credit);
        return;
      }
      // Rendezvous: request to send; the body follows the receiver's clear to send (or a credit
      // that crossed the request).
      this.waiting.set(req.id, req);
      const { tag, myRank, cid, seq, id } = req;
      conn.out.writeSmall(len, tag, EnvFlag.LONG | kindBits, myRank, cid, seq, id, 0, null);
      return;
    }
    conn.credits.noteSent();
    const flags = EnvFlag.SHORT | (sync ? EnvFlag.SSEND : 0) | kindBits;
    if (len <= this.settings.copyLimit && req.gather === null) {
      conn.out.writeSmall(len, req.tag, flags, req.myRank, req.cid, req.seq, req.id, 0, req.buf);
      if (!sync) {
        this.host.complete(req);
        return;
      }
      req.rpi = S_FLUSHED | S_NEED_ACK;
      req.state = ReqState.ACTIVE;
      this.waiting.set(req.id, req);
      return;
    }
    this.sendEagerTracked(conn, req, flags, 0);
  }

  /** A blocking send's fast path: a copied eager send, complete when this returns true. */
  fastsend(conn: Connection, req: RpiRequest): boolean {
    const buf = req.buf;
    if (buf === null || buf.byteLength > this.settings.copyLimit) return false; // or gathered
    conn.credits.noteSent();
    const flags = EnvFlag.SHORT | (req.kind << KIND_SHIFT);
    conn.out.writeSmall(buf.byteLength, req.tag, flags, req.myRank, req.cid, req.seq, 0, 0, buf);
    return true;
  }

  /** An eager message whose payload goes out without a copy; done once flushed (and acknowledged). */
  private sendEagerTracked(conn: Connection, req: RpiRequest, flags: number, credit: number): void {
    const payload = this.payloadOf(req);
    req.rpi = flags & EnvFlag.SSEND ? S_NEED_ACK : 0;
    req.state = ReqState.ACTIVE;
    this.waiting.set(req.id, req);
    const { tag, myRank, cid, seq, id } = req;
    const len = sendLength(req);
    if (conn.out.writeTracked(req, len, tag, flags, myRank, cid, seq, id, credit, payload)) {
      this.flushed(req);
    }
  }

  /** A tracked payload reached the kernel. */
  flushed(req: RpiRequest): void {
    if (this.waiting.get(req.id) !== req) return; // completed meanwhile (cancelled, failed)
    const bits = (req.rpi as number) | S_FLUSHED;
    req.rpi = bits;
    if (bits & S_NEED_ACK && !(bits & S_ACKED)) return;
    this.waiting.delete(req.id);
    this.host.complete(req);
  }

  /** An acknowledgement: clear to send, or the receipt of a synchronous send. */
  onAck(conn: Connection, env: WireEnvelope): void {
    const req = this.waiting.get(env.sid);
    if (req === undefined) return;
    if (env.flags & EnvFlag.LONG) {
      // Clear to send: the body goes out now, unless a crossing credit sent it already (the
      // answer may then come after the request completed: the sequence number tells).
      const bits = req.rpi as number;
      if (req.seq !== env.seq || req.proc !== conn.proc || bits & S_UNASKED) return;
      this.askedSends++;
      req.rpi = bits & ~S_CANCELING;
      this.sendBody(conn, req, env.rid);
      return;
    }
    const bits = (req.rpi as number) | S_ACKED;
    req.rpi = bits;
    if (bits & S_FLUSHED) {
      this.waiting.delete(env.sid);
      this.host.complete(req);
    }
  }

  /** A credit from the receiver (or its withdrawal): kept for the next long send that fits. */
  onCredit(conn: Connection, env: WireEnvelope): void {
    if (env.flags & EnvFlag.CANCEL) {
      conn.credits.withdraw(env.rid);
      return;
    }
    if (!this.settings.credits) return;
    const crossed = conn.credits.hold(env.rid, env.cid, env.tag, env.length, env.seq);
    if (crossed !== null) this.sendBodyUnasked(conn, crossed);
  }

  /** A credit crossed our request to send: the body goes now, without waiting to be asked. */
  private sendBodyUnasked(conn: Connection, req: RpiRequest): void {
    if (this.waiting.get(req.id) !== req || req.proc !== conn.proc) return; // done meanwhile
    const bits = req.rpi as number;
    // Synchronous mode completes on the clear to send; a cancel waits for its answer.
    if (req.state !== ReqState.START || req.type === ReqType.SSEND || bits & S_CANCELING) return;
    this.crossedSends++;
    req.rpi = bits | S_UNASKED;
    this.sendBody(conn, req, 0);
  }

  /** Writes a rendezvous body straight from the user's buffer. */
  private sendBody(conn: Connection, req: RpiRequest, rid: number): void {
    req.state = ReqState.ACTIVE;
    const payload = this.payloadOf(req);
    const flags = EnvFlag.SECOND | (req.kind << KIND_SHIFT);
    const { tag, myRank, cid, seq, id } = req;
    const len = sendLength(req);
    if (conn.out.writeTracked(req, len, tag, flags, myRank, cid, seq, id, rid, payload)) {
      this.flushed(req);
    }
  }

  /** What a tracked write sends: the buffer, or the ranges of a gather send (counted). */
  private payloadOf(req: RpiRequest): Payload {
    const ranges = req.gather;
    if (ranges === null) return req.buf!;
    this.gatheredSends++;
    this.gatheredRanges += ranges.length;
    return ranges;
  }

  /**
   * The user cancelled a send to the peer of `conn` (if connected): ask the receiver to drop it
   * while it has not matched it (a rendezvous not yet cleared, a synchronous send not yet
   * acknowledged); anything else is past taking back.
   */
  cancel(conn: Connection | undefined, req: RpiRequest): void {
    const bits = req.rpi as number;
    const waitingReceiver =
      this.waiting.get(req.id) === req &&
      ((req.state === ReqState.START && sendLength(req) > this.settings.short) ||
        (bits & S_NEED_ACK && !(bits & S_ACKED)));
    if (!waitingReceiver || bits & S_CANCELING) return;
    req.rpi = bits | S_CANCELING;
    conn?.out.writeSmall(0, req.tag, EnvFlag.CANCEL, req.myRank, req.cid, req.seq, req.id, 0, null);
  }

  /** The receiver's answer to a cancel: taken back (the send completes cancelled) or too late. */
  onCancelAnswer(env: WireEnvelope): void {
    const req = this.waiting.get(env.sid);
    if (req === undefined) return;
    req.rpi = (req.rpi as number) & ~S_CANCELING;
    if (env.flags & EnvFlag.CANCELLED) {
      this.waiting.delete(env.sid);
      req.cancelled = true;
      this.host.complete(req);
    }
  }

  /** The request goes away (destroyed): nothing is waited for on its behalf any more. */
  forget(req: RpiRequest): void {
    this.waiting.delete(req.id);
  }

  /** The peer is lost: its sends are failed by the MPI layer, not waited for here. */
  forgetPeer(proc: RpiRequest['proc']): void {
    for (const [id, req] of this.waiting) if (req.proc === proc) this.waiting.delete(id);
  }

  /** For `rpi_verbose 10` at finalize. */
  summary(): string {
    return (
      `long messages sent on a credit ${this.creditedSends}, on a crossing credit ` +
      `${this.crossedSends}, after a clear to send ${this.askedSends}; sends gathered ` +
      `${this.gatheredSends} from ${this.gatheredRanges} ranges`
    );
  }
}
