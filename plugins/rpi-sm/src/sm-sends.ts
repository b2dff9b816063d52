import type { RpiHost, RpiRequest } from '@ssi/mpi';
import {
  ENVELOPE_BYTES,
  EnvFlag,
  ErrorClass,
  KIND_SHIFT,
  MpiError,
  ReqState,
  ReqType,
  type WireEnvelope,
  writeEnvelope,
} from '@ssi/mpi';
import type { ShmEndpoint } from '@ssi/shm';
import type { PeerState, PeerTable } from './peer-state';
import { OFFER_BYTES, SHARE_BYTES, SHARED, type SingleCopy, TAKEN, WROTE } from './single-copy';
import type { SmStats } from './sm-stats';
import type { WireWords } from './wire-words';

/** Bits of `req.rpi` for on-node sends. */
const S_WRITTEN = 1; // every byte is in shared memory (or the receiver took it)
const S_ACKED = 2; // the receiver matched it (synchronous ACK, or clear to send)
const S_CANCELING = 4; // a cancel request is on its way

/** Limits of the sm wire for one segment (from its postbox size S, `rpi_sm_short`). */
export interface SmLimits {
  /** Largest payload that travels in the envelope's own postbox record (S - 32). */
  readonly inlineMax: number;
  /** Largest payload sent eagerly (S): envelope and body each fit a postbox record. */
  readonly eagerMax: number;
}

/**
 * The sending side of the sm path: eager messages (inline or in two records), requests to send
 * (with a single-copy offer when it is on), control records (ACK, clear to send, cancel), and the
 * sends waiting to be written, acknowledged or cleared. Every record goes to the endpoint's
 * postbox at once when there is room, else to its send queue (`enqueue`, completed by `reap`).
 */
export class SmSends {
  /** Sends waiting for their bytes to be written, an ACK or a clear to send, by id. */
  private readonly sends = new Map<number, RpiRequest>();
  private readonly ctl = Buffer.alloc(ENVELOPE_BYTES);
  /** The envelope of a fast send (its payload is written after it, from the send's buffer). */
  private readonly envelope = Buffer.alloc(ENVELOPE_BYTES);
  /** A control record with two numbers after the envelope (a SHARED answer). */
  private readonly ctlWith = Buffer.alloc(ENVELOPE_BYTES + SHARE_BYTES);
  /** Where an inline record is built: `trySend` copies it into the postbox at once. */
  private readonly record: Buffer;

  constructor(
    private readonly host: RpiHost,
    private readonly ep: ShmEndpoint,
    private readonly peers: PeerTable,
    private readonly limits: SmLimits,
    private readonly single: SingleCopy,
    private readonly stats: SmStats,
    private readonly lost: (err: unknown) => void,
    private readonly words: WireWords,
  ) {
    this.record = Buffer.allocUnsafe(Math.max(limits.eagerMax, ENVELOPE_BYTES + OFFER_BYTES));
  }

  start(req: RpiRequest): void {
    req.rpi = 0;
    const peer = this.peers.of(req.proc!);
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
      if (len > this.limits.eagerMax) {
        // Rendezvous: the body goes when the receiver clears it (cancellable until then).
        this.stats.rendezvous++;
        this.requestToSend(peer, req, EnvFlag.LONG | kind);
        return;
      }
      req.state = ReqState.ACTIVE;
      const flags = EnvFlag.SHORT | (sync ? EnvFlag.SSEND : 0) | kind;
      if (len <= this.limits.inlineMax) {
        this.stats.inline++;
        const msg = this.inlineMessage(req, flags);
        if (this.ep.trySend(peer.index, msg)) this.written(req);
        else this.enqueue(peer, Buffer.from(msg), req);
        return;
      }
      this.stats.eagerTwoRecords++;
      this.sendEnvelope(peer, req, flags);
      if (this.ep.trySend(peer.index, buf)) this.written(req);
      else this.enqueue(peer, buf, req);
    } catch (err) {
      this.sends.delete(req.id);
      this.fail(req, this.asMpiError(err, `send to ${req.proc!.describe()}`));
    }
  }

  /**
   * Fast blocking send: a standard message that fits a postbox record, written now or not at
   * all; null when the destination is not on this node.
   */
  fastsend(req: RpiRequest): boolean | null {
    const peer = this.peers.find(req.proc!);
    if (peer === undefined) return null;
    const buf = req.buf!;
    if (buf.byteLength > this.limits.inlineMax || req.type === ReqType.SSEND) return false;
    try {
      const words = this.words;
      const room = words.usable
        ? this.ep.claimTo(peer.index, ENVELOPE_BYTES + buf.byteLength)
        : null;
      if (room !== null) {
        // envelope and payload written in place in the postbox (one copy of the payload)
        words.writeSend(words.at(room), req, EnvFlag.SHORT);
        words.copyIn(room.byteOffset + ENVELOPE_BYTES, buf);
        this.ep.commitTo(peer.index);
        this.stats.inline++;
        return true;
      }
      // envelope and payload go into the postbox record as they are (one copy of the payload)
      const env = this.envelope;
      const flags = EnvFlag.SHORT | (req.kind << KIND_SHIFT);
      writeEnvelope(
        env,
        0,
        buf.byteLength,
        req.tag,
        flags,
        req.myRank,
        req.cid,
        req.seq,
        req.id,
        0,
      );
      const sent = this.ep.trySend(peer.index, env, buf);
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

  /** A request to send; with single copy on, it carries the address of the body (`offer`). */
  private requestToSend(peer: PeerState, req: RpiRequest, flags: number): void {
    if (!this.single.on) {
      this.sendEnvelope(peer, req, flags);
      return;
    }
    const msg = this.record.subarray(0, ENVELOPE_BYTES + OFFER_BYTES);
    const { tag, myRank, cid, seq, id } = req;
    writeEnvelope(msg, 0, req.buf!.byteLength, tag, flags, myRank, cid, seq, id, 0);
    this.single.offer(msg, req.buf!);
    if (!this.ep.trySend(peer.index, msg)) this.enqueue(peer, Buffer.from(msg), null);
  }

  private sendEnvelope(peer: PeerState, req: RpiRequest, flags: number): void {
    const { tag, myRank, cid, seq, id } = req;
    this.control(peer, req.buf!.byteLength, tag, flags, myRank, cid, seq, id, 0);
  }

  /**
   * Hands `data` to the endpoint's send queue (it did not fit the postbox now, or is a long
   * body): `reap` completes `req` (null: a control record) once it is written, whether the
   * endpoint's loop or our `flushSends` wrote it.
   */
  private enqueue(peer: PeerState, data: Uint8Array, req: RpiRequest | null): void {
    peer.queued.push(req);
    this.ep.send(peer.index, data).then(this.reapAll, req ? this.sendFailed(req) : this.lost);
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

  /** `reap` for every peer; true when a send moved. */
  readonly reapAll = (): boolean => {
    let any = false;
    for (const peer of this.peers.bySlot) if (peer?.queued.length && this.reap(peer)) any = true;
    return any;
  };

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
    const peer = this.peers.of(req.proc!);
    this.control(peer, 0, req.tag, EnvFlag.CANCEL, req.myRank, req.cid, req.seq, req.id, 0);
  }

  /** Writes a 32-byte envelope (no payload) to `peer`. */
  control(
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

  /**
   * A control record followed by two doubles (`a`, `b`): the SHARED answer of a receiver (its
   * address and split point).
   */
  controlWith(
    peer: PeerState,
    env: { length: number; tag: number; flags: number; rank: number; cid: number; seq: number },
    sid: number,
    rid: number,
    a: number,
    b: number,
  ): void {
    const msg = this.ctlWith;
    writeEnvelope(msg, 0, env.length, env.tag, env.flags, env.rank, env.cid, env.seq, sid, rid);
    msg.writeDoubleLE(a, ENVELOPE_BYTES);
    msg.writeDoubleLE(b, ENVELOPE_BYTES + 8);
    if (this.ep.trySend(peer.index, msg)) return;
    this.enqueue(peer, Buffer.from(msg), null);
  }

  /**
   * An ACK from the receiver: the body was taken (single copy: the send is complete), clear to
   * send (the body goes now, through the pool), or the receipt of a synchronous send.
   */
  onAck(peer: PeerState, env: WireEnvelope, record: Buffer): void {
    const req = this.sends.get(env.sid);
    if (req === undefined || req.proc !== peer.proc) return;
    req.rpi = ((req.rpi as number) | S_ACKED) & ~S_CANCELING;
    if ((env.flags & SHARED) === SHARED) {
      this.shareCopy(peer, req, env, record);
      return;
    }
    if ((env.flags & TAKEN) === TAKEN) {
      this.stats.bodiesTaken++;
      this.sends.delete(env.sid);
      this.host.complete(req);
      return;
    }
    if (env.flags & EnvFlag.LONG) {
      req.state = ReqState.ACTIVE;
      this.enqueue(peer, req.buf!, req);
      return;
    }
    if ((req.rpi as number) & S_WRITTEN) {
      this.sends.delete(env.sid);
      this.host.complete(req);
    }
  }

  /**
   * The receiver asked us to copy the tail of the body (from its split point on) into its
   * buffer while it reads the head; WROTE says we did (with CANCELLED: we could not, it reads the
   * tail itself). The send completes at the receiver's TAKEN.
   */
  private shareCopy(peer: PeerState, req: RpiRequest, env: WireEnvelope, record: Buffer): void {
    req.state = ReqState.ACTIVE;
    const { address, head } = this.single.sharedOf(record);
    const tail = req.buf!.subarray(head, head + env.length);
    const ok = this.single.give(peer.proc.gps.pid, address, tail);
    if (ok) this.stats.tailsWritten++;
    const flags = WROTE | (ok ? 0 : EnvFlag.CANCELLED);
    this.control(peer, 0, env.tag, flags, req.myRank, env.cid, env.seq, env.sid, env.rid);
  }

  /** The receiver's answer to our cancel: withdrawn (the send completes cancelled) or too late. */
  onCancelReply(env: WireEnvelope): void {
    const req = this.sends.get(env.sid);
    if (req === undefined) return;
    req.rpi = (req.rpi as number) & ~S_CANCELING;
    if (env.flags & EnvFlag.CANCELLED) {
      this.sends.delete(env.sid);
      req.cancelled = true;
      this.host.complete(req);
    }
  }

  /** Forgets a send (its request is destroyed). */
  forget(req: RpiRequest): void {
    this.sends.delete(req.id);
  }

  private asMpiError(err: unknown, what: string): MpiError {
    if (err instanceof MpiError) return err;
    return new MpiError(ErrorClass.ERR_OTHER, `rpi sm: ${what}: ${(err as Error)?.message ?? err}`);
  }
}
