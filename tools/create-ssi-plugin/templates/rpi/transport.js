// @ts-check
/**
 * The protocol: what this transport does with each request and each frame. It implements
 * `RpiActions` of `@ssi/mpi` (see docs/writing-an-rpi-module.md for the contract in prose).
 *
 * Who does what: the MPI layer owns the requests, the posted receives, the queue of unexpected
 * messages, sends to self and probes; it matches. This transport moves bytes between processes:
 *
 * - **Sends** (`start`) go out at once, eagerly, as one MESSAGE frame (envelope + a copy of the
 *   payload). A standard send of up to `short` bytes is then done: the bytes are copied, the
 *   user may reuse the buffer. A synchronous send (`ssend`), and any send longer than `short`,
 *   is done only when the receiver says a receive matched it (ACK): so a sender never runs ahead
 *   of its receiver with long messages, and such a send can still be taken back (cancelled)
 *   until it matched. (A production transport sends long messages by rendezvous instead,
 *   asking before it sends the body; see the tcp module.)
 * - **Arriving messages** go to the MPI layer's matching (`host.matchPosted`) in the order each
 *   peer sent them (one connection per peer keeps that order); what matches no posted receive
 *   is queued there as unexpected (`host.queueUnexpected`) and comes back through `matched`
 *   when a receive takes it.
 */
import {
  deliverBytes,
  ErrorClass,
  MessageHeader,
  MpiError,
  ReqState,
  ReqType,
  UnexpectedMessage,
} from '@ssi/mpi';
import { connectPeers } from './connections.js';
import { Flag, MAX_PAYLOAD, Op } from './frames.js';

/** @typedef {import('@ssi/mpi').Proc} Proc */
/** @typedef {import('@ssi/mpi').RpiHost} RpiHost */
/** @typedef {import('@ssi/mpi').RpiRequest} RpiRequest */
/** @typedef {import('@ssi/mpi').RpiActions} RpiActions */
/** @typedef {import('./frames.js').Envelope} Envelope */
/** @typedef {import('./connections.js').Peer} Peer */

/** `req.rpi` of a send whose CANCEL is on its way (asked once). */
const CANCEL_ASKED = 'cancel asked';

/** @implements {RpiActions} */
export class Transport {
  /**
   * @param {string} name the module's name (for messages)
   * @param {RpiHost} host what the MPI layer offers an rpi
   * @param {{ short: number, connectTimeout: number }} settings
   */
  constructor(name, host, settings) {
    this.name = name;
    this.host = host;
    this.settings = settings;
    /** @type {Map<Proc, Peer>} the connection to each peer */
    this.peers = new Map();
    /** @type {Map<number, RpiRequest>} sends waiting for their ACK, by request id */
    this.awaitingAck = new Map();
    /**
     * Synchronous messages queued as unexpected here (a CANCEL may still take them back), by
     * peer, then by the sender's request id.
     * @type {Map<Peer, Map<number, UnexpectedMessage>>}
     */
    this.unmatchedSync = new Map();
    this.addedOnce = false;
    this.finalizing = false;
    this.messagesSent = 0;
    this.messagesReceived = 0;
  }

  // ---- set-up and shutdown ------------------------------------------------------------------

  /**
   * Connects to the processes of MPI.init. `init` calls this once; the MPI layer adds no
   * processes after MPI.init today, and a second call could not take part in the job-wide
   * address exchange anyway.
   * @param {Proc[]} procs
   */
  async addprocs(procs) {
    if (this.addedOnce) {
      throw new MpiError(
        ErrorClass.ERR_OTHER,
        `rpi ${this.name}: processes can be added only once (in MPI.init)`,
      );
    }
    this.addedOnce = true;
    await connectPeers(this.host, procs, {
      name: this.name,
      timeoutMs: this.settings.connectTimeout,
      connected: (peer) => {
        const proc = /** @type {Proc} */ (peer.proc);
        this.peers.set(proc, peer);
        this.unmatchedSync.set(peer, new Map());
        peer.onFrame = (p, env, payload) => this.onFrame(p, env, payload);
        peer.onClose = (p, reason) => this.closed(p, reason);
      },
    });
    const me = this.host.myProc.gps.grank;
    this.host.verbose(10, `${this.name}: rank ${me} connected to ${this.peers.size} peers`);
  }

  /**
   * Stops talking to one process, or (no argument: called last, after all communication
   * completed) shuts the transport down.
   * @param {Proc} [proc]
   */
  async finalize(proc) {
    if (proc !== undefined) {
      const peer = this.peers.get(proc);
      this.peers.delete(proc);
      if (peer !== undefined) await peer.close();
      return;
    }
    this.finalizing = true;
    this.host.verbose(
      10,
      `${this.name}: rank ${this.host.myProc.gps.grank} sent ${this.messagesSent} messages, ` +
        `received ${this.messagesReceived}`,
    );
    await Promise.all([...this.peers.values()].map((peer) => peer.close()));
    this.peers.clear();
  }

  /**
   * A connection ended. Outside finalize that is a lost peer: the MPI layer fails the requests
   * that involve it and applies the error handler (it ignores this once it is finalizing).
   * @param {Peer} peer
   * @param {string} reason
   */
  closed(peer, reason) {
    const proc = /** @type {Proc} */ (peer.proc);
    if (this.finalizing || this.peers.get(proc) !== peer) return;
    for (const [id, req] of this.awaitingAck) if (req.proc === proc) this.awaitingAck.delete(id);
    this.host.peerFailed(proc, reason);
  }

  // ---- the request life cycle: build → start → (active) → complete → destroy ----------------

  /** @param {RpiRequest} req */
  build(req) {
    req.rpi = null; // this transport keeps nothing per request beyond `awaitingAck`
  }

  /** @param {RpiRequest} req */
  destroy(req) {
    if (this.awaitingAck.get(req.id) === req) this.awaitingAck.delete(req.id);
    req.rpi = null;
  }

  /** Progress comes from socket events, never from polling. */
  advance() {
    return false;
  }

  /**
   * Starts a send to another process (receives and sends to self never come here).
   * @param {RpiRequest} req
   */
  start(req) {
    req.rpi = null;
    const proc = /** @type {Proc} */ (req.proc);
    const peer = this.peers.get(proc);
    // This module declares neither `gather` nor `scatter`: the MPI layer always hands over the
    // packed bytes in `req.buf`.
    const bytes = /** @type {Uint8Array} */ (req.buf);
    if (peer === undefined || peer.socket.destroyed) {
      this.fail(req, ErrorClass.ERR_OTHER, `no connection to ${proc.describe()}`);
      return;
    }
    if (bytes.byteLength > MAX_PAYLOAD) {
      this.fail(req, ErrorClass.ERR_COUNT, `a message of ${bytes.byteLength} bytes is too long`);
      return;
    }
    const sync = req.type === ReqType.SSEND || bytes.byteLength > this.settings.short;
    peer.send(
      {
        op: Op.MESSAGE,
        flags: sync ? Flag.SYNC : 0,
        cid: req.cid,
        rank: req.myRank,
        tag: req.tag,
        kind: req.kind,
        seq: req.seq,
        sendId: req.id,
      },
      bytes,
    );
    this.messagesSent++;
    if (!sync) {
      this.host.complete(req); // the frame holds a copy: the buffer is the user's again
      return;
    }
    req.state = ReqState.ACTIVE;
    this.awaitingAck.set(req.id, req);
  }

  /**
   * The user cancelled a send. Only a send still waiting for its ACK can be taken back: ask the
   * receiver. Every other send is complete already, and stays so (not cancelled).
   * @param {RpiRequest} req
   */
  cancel(req) {
    if (this.awaitingAck.get(req.id) !== req || req.rpi === CANCEL_ASKED) return;
    req.rpi = CANCEL_ASKED;
    const peer = this.peers.get(/** @type {Proc} */ (req.proc));
    peer?.send(this.reply(Op.CANCEL, 0, req, req.id));
  }

  /**
   * A receive took an unexpected message this transport queued. Its status is recorded already
   * (`req.stLength` is how many bytes to deliver: fewer than the message when it was truncated).
   * @param {RpiRequest} req
   * @param {UnexpectedMessage} msg
   */
  matched(req, msg) {
    const peer = this.peers.get(msg.proc);
    if (msg.flags & Flag.SYNC && peer !== undefined) {
      this.unmatchedSync.get(peer)?.delete(/** @type {number} */ (msg.extra));
      peer.send(this.reply(Op.ACK, 0, msg, /** @type {number} */ (msg.extra)));
    }
    deliverBytes(req, /** @type {Uint8Array} */ (msg.data), true);
    this.host.complete(req);
  }

  // ---- frames from peers --------------------------------------------------------------------

  /**
   * @param {Peer} peer
   * @param {Envelope} env
   * @param {Uint8Array} payload
   */
  onFrame(peer, env, payload) {
    if (env.op === Op.MESSAGE) this.onMessage(peer, env, payload);
    else if (env.op === Op.ACK) this.onAck(peer, env);
    else if (env.op === Op.CANCEL) this.onCancel(peer, env);
    else if (env.op === Op.CANCEL_REPLY) this.onCancelReply(peer, env);
    else peer.socket.destroy(new Error(`unknown frame type ${env.op}`));
  }

  /**
   * A message arrived (all of it). Matching sets the receive's status, including truncation
   * (`req.error`), and the source of an ANY_SOURCE receive; the transport delivers the bytes.
   * @param {Peer} peer
   * @param {Envelope} env
   * @param {Uint8Array} payload
   */
  onMessage(peer, env, payload) {
    this.messagesReceived++;
    const proc = /** @type {Proc} */ (peer.proc);
    const header = new MessageHeader();
    header.cid = env.cid;
    header.rank = env.rank;
    header.tag = env.tag;
    header.kind = env.kind;
    header.seq = env.seq;
    header.length = payload.byteLength;
    const req = this.host.matchPosted(proc, header);
    if (req !== null) {
      if (env.flags & Flag.SYNC) peer.send(this.reply(Op.ACK, 0, env, env.sendId));
      deliverBytes(req, payload, true);
      this.host.complete(req);
      return;
    }
    // No receive is posted for it (yet): the MPI layer queues it; a later receive that takes
    // it comes back to `matched`. It must be queued before the next message is handed over.
    const msg = new UnexpectedMessage(proc, header, env.flags);
    msg.data = payload;
    msg.received = payload.byteLength;
    msg.extra = env.sendId;
    if (env.flags & Flag.SYNC) this.unmatchedSync.get(peer)?.set(env.sendId, msg);
    this.host.queueUnexpected(msg);
  }

  /**
   * The receiver matched our synchronous (or long) send: it is done.
   * @param {Peer} peer
   * @param {Envelope} env
   */
  onAck(peer, env) {
    const req = this.awaitingAck.get(env.sendId);
    if (req === undefined || req.proc !== peer.proc || req.seq !== env.seq) return;
    this.awaitingAck.delete(env.sendId);
    this.host.complete(req);
  }

  /**
   * The sender asks for message `sendId` back: possible while no receive has taken it.
   * @param {Peer} peer
   * @param {Envelope} env
   */
  onCancel(peer, env) {
    const queued = this.unmatchedSync.get(peer);
    const msg = queued?.get(env.sendId);
    const taken = msg !== undefined && msg.seq === env.seq && this.host.withdrawUnexpected(msg);
    if (taken) queued?.delete(env.sendId);
    peer.send(this.reply(Op.CANCEL_REPLY, taken ? Flag.CANCELLED : 0, env, env.sendId));
  }

  /**
   * The answer to our CANCEL. "Too late" needs nothing: the receiver matched the message and
   * sent its ACK before this answer, so the send has completed already.
   * @param {Peer} peer
   * @param {Envelope} env
   */
  onCancelReply(peer, env) {
    const req = this.awaitingAck.get(env.sendId);
    if (req === undefined || req.proc !== peer.proc || req.seq !== env.seq) return;
    if (!(env.flags & Flag.CANCELLED)) return;
    this.awaitingAck.delete(env.sendId);
    req.cancelled = true;
    this.host.complete(req);
  }

  // ---- helpers ------------------------------------------------------------------------------

  /**
   * A payload-less frame about message `sendId` (an ACK, a CANCEL or its answer): it names the
   * message by its sender's request id and sequence number.
   * @param {number} op
   * @param {number} flags
   * @param {{ cid: number, tag: number, seq: number }} about the message
   * @param {number} sendId
   * @returns {Envelope}
   */
  reply(op, flags, about, sendId) {
    const rank = this.host.myProc.gps.grank;
    return { op, flags, cid: about.cid, rank, tag: about.tag, kind: 0, seq: about.seq, sendId };
  }

  /**
   * Completes a send with an error.
   * @param {RpiRequest} req
   * @param {import('@ssi/mpi').ErrorClassValue} errorClass
   * @param {string} what
   */
  fail(req, errorClass, what) {
    req.error = new MpiError(errorClass, `rpi ${this.name}: ${what}`);
    this.host.complete(req);
  }
}
