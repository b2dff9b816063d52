import net from 'node:net';
import type { Proc, RpiRequest, UnexpectedMessage } from '@ssi/mpi';
import { ENVELOPE_BYTES, WireEnvelope } from '@ssi/mpi';
import { BodyReader, type ReadBuffers } from './body-reader';
import { ConnectionWriter } from './connection-writer';
import { PeerCredits } from './credits';
import type { Hello } from './handshake';
import {
  checkProof,
  checkResponse,
  HELLO_BYTES,
  makeHello,
  makeProof,
  makeResponse,
  PROOF_BYTES,
  parseHello,
  RESPONSE_BYTES,
} from './handshake';

/** Where a dial goes: the peer's TCP listener, and its Unix socket if it is to be used. */
export interface DialTarget {
  host: string;
  port: number;
  /** The local address to dial from (this process's listening address). */
  localAddress: string;
  /** The peer's abstract Unix socket name, or null: TCP only. */
  unix: string | null;
}

/** Read states of a connection. */
const R_HELLO = 1; // acceptor: waiting for the connector's HELLO
const R_PROOF = 2; // acceptor: waiting for the connector's PROOF
const R_RESPONSE = 3; // connector: waiting for the acceptor's RESPONSE
const R_HEADER = 4; // an envelope (possibly split over reads)
const R_BODY = 5; // the payload of an eager message or rendezvous body
const R_CLOSED = 6;
const R_PARKED = 7; // acceptor: HELLO read, the owner answers later (`answerHello`)

/** What a connection needs from the module that owns it. */
export interface ConnectionOwner extends ReadBuffers {
  readonly jobId: string;
  readonly secret: Uint8Array;
  readonly myRank: number;
  /** An envelope arrived; `env` is the connection's record, refilled for the next envelope. */
  onEnvelope(conn: Connection, env: WireEnvelope): void;
  /** A body read into a posted receive is complete. */
  bodyDone(conn: Connection, req: RpiRequest): void;
  /** A body read into an unexpected message is complete. */
  unexpectedDone(conn: Connection, msg: UnexpectedMessage): void;
  /** A tracked write was flushed to the kernel. */
  sendFlushed(req: RpiRequest): void;
  /**
   * The acceptor learned who connected: the process entry, null if unknown/unwanted, or
   * 'later' when the owner cannot tell yet (it calls `answerHello` on the connection then).
   */
  acceptPeer(conn: Connection, hello: Hello): Proc | null | 'later';
  /** The connection is authenticated and ready for MPI traffic. */
  established(conn: Connection): void;
  /** The connection failed its handshake or closed. */
  closed(conn: Connection, reason: string): void;
}

/**
 * One connection to a peer (TCP or a Unix socket): authentication, the envelope/body read state
 * machine with reads straight into posted receive buffers, and its writing side (`out`, a
 * `ConnectionWriter`).
 */
export class Connection {
  socket!: net.Socket;
  proc: Proc | null = null;
  /** Rendezvous bodies this side asked for (CTS sent) and not yet received. */
  expectingSecond = 0;
  /** Receives that answered a request to send (clear to send), by sender request id. */
  private readonly answeredBySid = new Map<number, number>();
  /** Unexpected synchronous / rendezvous messages from this peer, by sender request id (cancel). */
  readonly unexpectedBySid = new Map<number, UnexpectedMessage>();
  /** Receiver-initiated rendezvous with this peer, both directions (kept across a reconnect). */
  credits = new PeerCredits<RpiRequest>();
  /** How many connections to this peer there have been: 1, plus one per reconnect (`adopt`). */
  generation = 1;
  readonly ready: Promise<void>;
  /** The writing side: protocol writes, held writes, byte counter (`out.bytesOut`). */
  readonly out: ConnectionWriter;
  closing = false;
  /** The socket family: TCP, or a Unix-domain socket to a peer on this node (`rpi_tcp_unix`). */
  via: 'tcp' | 'unix' = 'tcp';
  /** Why a dial over the peer's Unix socket failed and went TCP instead ('' if none did). */
  unixFailure = '';
  /** This side dialed (connector); and the dial reached the peer's listener. */
  dialed = false;
  reached = false;
  /** The envelope being handled (one record per connection, refilled for every envelope). */
  private readonly envelope = new WireEnvelope();
  /** It closed between two frames (a reconnect may replace it without losing a message). */
  private closedAtBoundary = false;
  /** Bytes read from the socket, everything included (crtcp's drain counters; written: `out`). */
  bytesIn = 0;
  /** `whenReceived` calls waiting for `bytesIn` to reach their count. */
  private drainWaiters: { bytes: number; resolve: () => void }[] = [];

  private rstate: number;
  private readonly hdr = Buffer.allocUnsafe(Math.max(ENVELOPE_BYTES, RESPONSE_BYTES, HELLO_BYTES));
  private hdrFill = 0;
  /** Where the bytes of the body being read go (state R_BODY). */
  private readonly body: BodyReader;

  private hello: Hello | null = null;
  private nonce: Buffer | null = null;
  private resolveReady!: () => void;
  private rejectReady!: (err: Error) => void;
  private failure = '';

  private constructor(
    private readonly owner: ConnectionOwner,
    accepting: boolean,
  ) {
    this.rstate = accepting ? R_HELLO : R_RESPONSE;
    this.body = new BodyReader(owner);
    this.out = new ConnectionWriter((req) => owner.sendFlushed(req));
    this.ready = new Promise<void>((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => {});
  }

  private readonly onread = {
    buffer: (): Uint8Array => this.nextBuffer(),
    callback: (nread: number, buf: Uint8Array): boolean => {
      this.onRead(nread, buf as Buffer);
      return true;
    },
  };

  /**
   * Connects to a peer's listener (the lower-indexed side of a pair connects): over its Unix
   * socket when `to.unix` names one, falling back to TCP if that dial fails (the peer is not on
   * this machine after all, or its listener is gone), else over TCP.
   */
  static connect(owner: ConnectionOwner, proc: Proc, to: DialTarget, noDelay: boolean): Connection {
    const conn = new Connection(owner, false);
    conn.proc = proc;
    conn.dialed = true;
    if (to.unix !== null) conn.dialUnix(to, noDelay);
    else conn.dialTcp(to, noDelay);
    return conn;
  }

  private dialTcp(to: DialTarget, noDelay: boolean): void {
    const { host, port, localAddress } = to;
    const socket = net.connect({ host, port, localAddress, noDelay, onread: this.onread });
    this.via = 'tcp';
    this.attach(socket);
    socket.once('connect', () => this.sayHello());
  }

  /**
   * A Unix dial is attached (its close reported, its bytes read) only once it connected: a dial
   * that fails before is dropped quietly and replaced by a TCP dial on the same connection.
   */
  private dialUnix(to: DialTarget, noDelay: boolean): void {
    const socket = net.connect({ path: to.unix!, onread: this.onread });
    this.socket = socket;
    const fallBack = (err: Error) => {
      socket.destroy();
      if (this.rstate === R_CLOSED) return; // refused or closed meanwhile
      this.unixFailure = err.message;
      this.dialTcp(to, noDelay);
    };
    socket.once('error', fallBack);
    socket.once('connect', () => {
      socket.off('error', fallBack);
      this.via = 'unix';
      this.attach(socket);
      this.sayHello();
    });
  }

  private sayHello(): void {
    this.reached = true;
    const { bytes, nonce } = makeHello(this.owner.jobId, this.owner.myRank, this.proc!.gps.grank);
    this.nonce = nonce;
    this.out.write(bytes);
  }

  /**
   * Takes over a socket accepted by a server created with `pauseOnConnect` (nothing has been read
   * from it), re-wrapping its handle so that reads go to our own buffers (`onread`). `via`: the
   * listener's family (a Unix socket has no Nagle to turn off).
   */
  static accept(
    owner: ConnectionOwner,
    accepted: net.Socket,
    noDelay: boolean,
    via: 'tcp' | 'unix' = 'tcp',
  ): Connection {
    const conn = new Connection(owner, true);
    conn.via = via;
    const raw = accepted as unknown as { _handle: unknown };
    const handle = raw._handle;
    raw._handle = null;
    accepted.destroy();
    const socket = new net.Socket({
      handle,
      readable: true,
      writable: true,
      onread: conn.onread,
    } as net.SocketConstructorOpts);
    if (via === 'tcp') socket.setNoDelay(noDelay);
    conn.attach(socket);
    socket.resume();
    return conn;
  }

  private attach(socket: net.Socket): void {
    this.socket = socket;
    this.out.socket = socket;
    // The MPI layer keeps the process alive while requests are active; an idle connection must
    // not (a program that returns without MPI.finalize would hang instead of being told).
    socket.unref();
    socket.on('error', (err) => {
      this.failure = err.message;
    });
    socket.on('close', () => {
      const reason = this.failure || 'connection closed';
      const wasOpen = this.rstate !== R_CLOSED;
      this.closedAtBoundary = wasOpen && this.atFrameBoundary;
      this.rstate = R_CLOSED;
      this.rejectReady(new Error(reason));
      if (wasOpen) this.owner.closed(this, reason);
    });
  }

  /** Fails the handshake: closes the socket without reading anything more. */
  private refuse(reason: string): void {
    this.failure = reason;
    this.rstate = R_CLOSED;
    this.rejectReady(new Error(reason));
    this.socket.destroy();
    this.owner.closed(this, reason);
  }

  /**
   * Resolves once `bytes` bytes in all have been read from this connection and handled (each
   * message in them matched, queued or delivered): with the peer's count of bytes written, the
   * channel is then known to be empty (Fig. 7.8).
   */
  whenReceived(bytes: number): Promise<void> {
    if (this.bytesIn >= bytes) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push({ bytes, resolve }));
  }

  private wakeDrainWaiters(): void {
    const still: { bytes: number; resolve: () => void }[] = [];
    for (const w of this.drainWaiters) {
      if (this.bytesIn >= w.bytes) w.resolve();
      else still.push(w);
    }
    this.drainWaiters = still;
  }

  /** Receive `rid` sent a clear to send for the peer's request `sid`: its body is coming. */
  answered(sid: number, rid: number): void {
    this.answeredBySid.set(sid, rid);
    this.expectingSecond++;
  }

  /** The body of request `sid` arrived: the receive that answered it, or 0 if none has. */
  takeAnswered(sid: number): number {
    const rid = this.answeredBySid.get(sid);
    if (rid === undefined) return 0;
    this.answeredBySid.delete(sid);
    this.expectingSecond--;
    return rid;
  }

  // ---- reading -----------------------------------------------------------------------------

  private nextBuffer(): Uint8Array {
    return this.body.nextBuffer(
      this.rstate === R_BODY,
      this.expectingSecond === 0 && this.credits.granted === 0,
    );
  }

  private onRead(nread: number, buf: Buffer): void {
    this.owner.stats.reads++;
    this.body.noteRead(nread, buf);
    this.bytesIn += nread;
    this.handleRead(nread, buf);
    if (this.drainWaiters.length > 0) this.wakeDrainWaiters();
  }

  private handleRead(nread: number, buf: Buffer): void {
    if (this.body.directRead) {
      if (this.body.landedDirect(nread, buf)) this.finishBody();
      return;
    }
    this.process(buf, nread);
  }

  /** Runs the state machine over `n` bytes of `buf` (a staging buffer). */
  private process(buf: Buffer, n: number): void {
    let off = 0;
    while (off < n) {
      const state = this.rstate;
      if (state === R_HEADER) {
        let src = buf;
        let at = off;
        if (this.hdrFill === 0 && n - off >= ENVELOPE_BYTES) {
          off += ENVELOPE_BYTES;
        } else {
          const take = Math.min(ENVELOPE_BYTES - this.hdrFill, n - off);
          buf.copy(this.hdr, this.hdrFill, off, off + take);
          this.hdrFill += take;
          off += take;
          if (this.hdrFill < ENVELOPE_BYTES) return;
          this.hdrFill = 0;
          src = this.hdr;
          at = 0;
        }
        this.owner.onEnvelope(this, this.envelope.read(src, at));
      } else if (state === R_BODY) {
        off += this.body.copyIn(buf, off, n);
        if (this.body.complete) this.finishBody();
      } else if (state === R_CLOSED) {
        return;
      } else {
        off = this.handshake(buf, off, n);
      }
    }
  }

  /** Expects `length` body bytes; the first `keep` go into `target` (the rest are dropped). */
  expectBody(
    target: Uint8Array | null,
    keep: number,
    length: number,
    req: RpiRequest | null,
    msg: UnexpectedMessage | null,
  ): void {
    this.rstate = R_BODY;
    this.body.expect(target, keep, length, req, msg);
  }

  /** Expects `length` body bytes for a scattered receive; the first `keep` go into its layout. */
  expectScatter(req: RpiRequest, keep: number, length: number): void {
    this.rstate = R_BODY;
    this.body.expectScatter(req, keep, length);
  }

  /**
   * A receive matched the unexpected message whose body is being read now: the rest of the body
   * goes straight into the receive's buffer (what has arrived is copied once).
   */
  redirectBody(msg: UnexpectedMessage, req: RpiRequest, keep: number): boolean {
    return this.rstate === R_BODY && this.body.redirect(msg, req, keep);
  }

  private finishBody(): void {
    const req = this.body.request;
    const msg = this.body.message;
    this.rstate = R_HEADER;
    this.body.finish();
    if (req !== null) this.owner.bodyDone(this, req);
    else if (msg !== null) {
      msg.received = msg.length;
      this.owner.unexpectedDone(this, msg);
    }
  }

  private handshake(buf: Buffer, off: number, n: number): number {
    if (this.rstate === R_PARKED) {
      this.refuse(`rank ${this.hello!.from} sent bytes before its hello was answered`);
      return n;
    }
    const need =
      this.rstate === R_HELLO
        ? HELLO_BYTES
        : this.rstate === R_PROOF
          ? PROOF_BYTES
          : RESPONSE_BYTES;
    const take = Math.min(need - this.hdrFill, n - off);
    buf.copy(this.hdr, this.hdrFill, off, off + take);
    this.hdrFill += take;
    off += take;
    if (this.hdrFill < need) return off;
    this.hdrFill = 0;
    const bytes = this.hdr.subarray(0, need);
    const o = this.owner;
    if (this.rstate === R_HELLO) {
      const hello = parseHello(bytes, o.jobId);
      if (typeof hello === 'string') {
        this.refuse(hello);
        return n;
      }
      if (hello.to !== o.myRank) {
        this.refuse(`the peer wanted rank ${hello.to}, this is rank ${o.myRank}`);
        return n;
      }
      this.hello = hello;
      const proc = o.acceptPeer(this, hello);
      if (proc === 'later') {
        this.rstate = R_PARKED; // the connector sends nothing more until it is answered
        return off;
      }
      this.answerHello(proc);
      if (this.proc === null) return n; // refused: the socket is closed
    } else if (this.rstate === R_PROOF) {
      if (!checkProof(Buffer.from(bytes), o.secret, o.jobId, this.nonce!, this.hello!)) {
        this.refuse(`rank ${this.hello!.from} could not prove knowledge of the job secret`);
        return n;
      }
      this.rstate = R_HEADER;
      o.established(this);
      this.resolveReady();
    } else {
      const peer = this.proc!.gps.grank;
      const nonceA = checkResponse(bytes, o.secret, o.jobId, this.nonce!, o.myRank, peer);
      if (typeof nonceA === 'string') {
        this.refuse(`rank ${peer}: ${nonceA}`);
        return n;
      }
      this.out.write(makeProof(o.secret, o.jobId, nonceA, o.myRank, peer));
      this.rstate = R_HEADER;
      o.established(this);
      this.resolveReady();
    }
    return off;
  }

  /**
   * Answers the connector's HELLO (read, and parked if the owner said 'later'): `proc` is who
   * it is, or null to refuse the connection.
   */
  answerHello(proc: Proc | null): void {
    if (this.rstate !== R_HELLO && this.rstate !== R_PARKED) return; // closed meanwhile
    const hello = this.hello!;
    if (!proc) {
      this.refuse(`unexpected connection claiming to be rank ${hello.from}`);
      return;
    }
    this.proc = proc;
    const o = this.owner;
    const { bytes: response, nonce } = makeResponse(o.secret, o.jobId, hello);
    this.nonce = nonce;
    this.out.write(response);
    this.rstate = R_PROOF;
  }

  /** Nothing half-read: the reader stands between two frames (a drained connection does). */
  get atFrameBoundary(): boolean {
    if (this.rstate === R_CLOSED) return this.closedAtBoundary;
    return this.rstate === R_HEADER && this.hdrFill === 0;
  }

  /**
   * Takes over the protocol state of the connection to the same peer it replaces (reconnect
   * after a drain): rendezvous asked and answered, unexpected messages a cancel may still name,
   * and the writes held meanwhile. Credits the peer gave are forgotten (the peer still accepts a
   * request to send for its posted receive; a credit only saves a round trip), so both sides
   * stay consistent whatever the old connection last carried.
   */
  adopt(old: Connection): void {
    for (const [sid, rid] of old.answeredBySid) this.answeredBySid.set(sid, rid);
    for (const [sid, m] of old.unexpectedBySid) this.unexpectedBySid.set(sid, m);
    this.expectingSecond = old.expectingSecond;
    this.credits = old.credits;
    this.credits.forgetHeld();
    this.out.takeHeld(old.out);
    this.generation = old.generation + 1;
  }

  /** Closes after everything queued has been written. */
  close(): Promise<void> {
    this.closing = true;
    return new Promise<void>((resolve) => {
      if (this.socket.destroyed) return resolve();
      const timer = setTimeout(() => {
        this.socket.destroy();
        resolve();
      }, 2000);
      timer.unref();
      this.socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      this.socket.end();
    });
  }
}
