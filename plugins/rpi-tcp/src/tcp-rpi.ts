import net from 'node:net';
import type { Proc, RpiGather, RpiHost, RpiRequest, RpiScatter, WireEnvelope } from '@ssi/mpi';
import {
  allocMessage,
  deliverBytes,
  EnvFlag,
  ErrorClass,
  KIND_SHIFT,
  MpiError,
  OobTag,
  ProcMode,
  ReqState,
  ReqType,
  UnexpectedMessage,
  withDeadline,
} from '@ssi/mpi';
import type { ConnectionOwner, Payload, ReadStats } from './connection';
import { Connection, type DialTarget } from './connection';
import type { Hello } from './handshake';
import { LazyLinks, type PeerAddress } from './lazy-links';
import type { KernelBuffers, SocketTuner } from './socket-buffers';
import { cappedBuffers } from './socket-buffers';
import { TCP_TRANSPORT_API, type TcpTraffic, type TcpTransport } from './transport-api';
import { dialsUnix, listenUnix, showUnixName, unixName, unixSupported } from './unix-path';

/** Settings of one tcp module instance, from its parameters. */
export interface TcpSettings {
  /** Messages up to this many bytes are sent eagerly; longer ones by rendezvous. */
  short: number;
  /** Payloads up to this many bytes are copied next to their envelope (one write, no tracking). */
  copyLimit: number;
  /** Size of the shared read buffer. */
  readBuffer: number;
  /** Read size while rendezvous bodies are expected (bounds the part of a body that is copied). */
  smallRead: number;
  /** Bodies with at least this many bytes left are read straight into the receive buffer. */
  directMin: number;
  noDelay: boolean;
  /** Announce posted long receives to their sender (receiver-initiated rendezvous). */
  credits: boolean;
  /** Kernel buffer sizes asked for (0: the kernel's autotuning), and what sets them. */
  socketBuffers: KernelBuffers;
  tuneSocket: SocketTuner | null;
  /** Address to listen on; empty: the node address from the runtime. */
  address: string;
  connectTimeout: number;
  /** Connect to a peer on the first send to it (true), or to every peer in addprocs. */
  lazy: boolean;
  /** Connect to peers on this node over a Unix-domain socket (`rpi_tcp_unix`; Linux only). */
  unix: boolean;
  /** What `tuneUnixSocket` asks for (`rpi_tcp_unix_sndbuf`). */
  unixBuffers: KernelBuffers;
  /** Sets the buffers of Unix-socket connections; null: `tuneSocket` or the kernel's. */
  tuneUnixSocket: SocketTuner | null;
  /** Why `tuneUnixSocket` is null (verbose output). */
  unixUntuned: string;
  /** Non-contiguous sends written from their ranges (`RpiActions.gather`); null: packed. */
  gather: RpiGather | null;
  /** Non-contiguous receives read into their layout (`RpiActions.scatter`); null: staged. */
  scatter: RpiScatter | null;
}

/** Bits of `req.rpi` for sends that wait for the network or the receiver. */
const S_FLUSHED = 1; // payload handed to the kernel
const S_ACKED = 2; // receiver acknowledged (synchronous mode)
const S_NEED_ACK = 4; // synchronous mode: completion needs the acknowledgement
const S_CANCELING = 8; // a cancel request is on its way to the receiver
const S_UNASKED = 16; // the body went on a credit that crossed the request to send

/**
 * The tcp rpi: a full mesh of authenticated sockets, eager sends up to `short` bytes, a
 * rendezvous protocol above (request to send → clear to send → body, or, when the receive was
 * posted first, credit → body, or request to send → body when the credit crossed the request:
 * see `PeerCredits`), acknowledgements for synchronous mode, and cancellation of sends the
 * receiver has not matched. Progress is driven entirely by socket events; nothing polls.
 */
export class TcpRpi implements TcpTransport, ConnectionOwner {
  readonly transportApi = TCP_TRANSPORT_API;
  readonly jobId: string;
  readonly secret: Uint8Array;
  readonly myRank: number;
  readonly staging: Buffer;
  readonly stagingSmall: Buffer;
  readonly directMin: number;
  readonly stats: ReadStats = {
    reads: 0,
    direct: 0,
    copiedPosted: 0,
    copiedUnexpected: 0,
    scatteredRecvs: 0,
    scatteredBytes: 0,
  };
  /** Long messages sent: on a credit, on a credit that crossed the request, after a clear to send. */
  private creditedSends = 0;
  private crossedSends = 0;
  private askedSends = 0;
  /** Sends written from ranges of the user's buffer (gather), and those ranges. */
  private gatheredSends = 0;
  private gatheredRanges = 0;
  /** `RpiActions.gather`: set unless `rpi_tcp_gather` is 0. */
  readonly gather?: RpiGather;
  /** `RpiActions.scatter`: set unless `rpi_tcp_scatter` is 0. */
  readonly scatter?: RpiScatter;

  private readonly conns = new Map<Proc, Connection>();
  /** Sends waiting for a clear-to-send, a synchronous acknowledgement or a flush, by id. */
  private readonly sends = new Map<number, RpiRequest>();
  /** Receives that sent a clear-to-send and wait for the rendezvous body, by id. */
  private readonly bodies = new Map<number, RpiRequest>();
  private server: net.Server | null = null;
  /** The Unix-socket listener for peers on this node (`rpi_tcp_unix`), beside `server`. */
  private unixServer: net.Server | null = null;
  private unixListenName = '';
  /** Lazy mode: the peers' addresses and the connections being set up. */
  private links: LazyLinks | null = null;
  /** The address this process listens and dials from. */
  private address = '';
  private finalizing = false;
  /** holdWrites was called and releaseWrites not yet. */
  private holding = false;
  /** Connections closed while their writes were held, and why (see `closed`). */
  private readonly lostWhileHeld = new Map<Connection, string>();
  private warnedCapped = false;
  private readonly waitingAccept = new Map<
    number,
    { proc: Proc; resolve: (c: Connection) => void }
  >();

  constructor(
    private readonly host: RpiHost,
    private readonly settings: TcpSettings,
  ) {
    this.jobId = host.runtime.jobId;
    this.secret = host.runtime.secret;
    this.myRank = host.myProc.gps.grank;
    this.staging = Buffer.allocUnsafeSlow(Math.max(settings.readBuffer, 4096));
    this.stagingSmall = this.staging.subarray(0, Math.min(settings.smallRead, this.staging.length));
    this.directMin = settings.directMin;
    if (settings.gather !== null) this.gather = settings.gather;
    if (settings.scatter !== null) this.scatter = settings.scatter;
  }

  // ---- set-up (addprocs, C.2.5) --------------------------------------------------------------

  /** Opens a socket to every new process (see `connectMesh`). */
  async addprocs(procs: Proc[]): Promise<void> {
    const me = this.host.myProc;
    if (this.settings.lazy) await this.publishAddress(procs);
    else await this.connectMesh(procs.filter((p) => p !== me));
  }

  /** Listens (once per addprocs round) on this process's address: the node's, or rpi_tcp_address. */
  private async listening(): Promise<PeerAddress> {
    const me = this.host.myProc;
    const address = this.settings.address || me.host || this.host.runtime.host;
    this.address = address;
    const server = this.server ?? (await this.listen(address));
    this.server = server;
    const port = (server.address() as net.AddressInfo).port;
    const unix = await this.listeningUnix();
    const also = unix === undefined ? '' : ` and ${showUnixName(unix)}`;
    this.host.verbose(10, `tcp: rank ${this.myRank} listening on ${address}:${port}${also}`);
    return unix === undefined ? { host: address, port } : { host: address, port, unix };
  }

  /**
   * With `rpi_tcp_unix` (on Linux), a second listener on an abstract Unix socket name for peers on
   * this node; its name travels with the TCP address. A listener that cannot be opened leaves
   * this process on TCP only (said at `rpi_verbose 0`), never fails the job.
   */
  private async listeningUnix(): Promise<string | undefined> {
    if (!this.settings.unix || !unixSupported()) return undefined;
    if (this.unixServer !== null) return this.unixListenName;
    const name = unixName(this.jobId, this.myRank);
    try {
      this.unixServer = await listenUnix(name, (socket) =>
        Connection.accept(this, socket, this.settings.noDelay, 'unix'),
      );
      this.unixListenName = name;
      return name;
    } catch (err) {
      this.host.verbose(
        0,
        `tcp: rank ${this.myRank}: no Unix socket for peers on this node (${(err as Error).message}); TCP only`,
      );
      return undefined;
    }
  }

  /** Where a dial to `proc` at `at` goes: its Unix socket when it is on this node, else TCP. */
  private dialTarget(proc: Proc, at: PeerAddress): DialTarget {
    const unix = dialsUnix(this.host.myProc, proc, at.unix, this.settings.unix) ? at.unix! : null;
    return { host: at.host, port: at.port, localAddress: this.address, unix };
  }

  /** Stops listening (both families) until the next addprocs or reconnect. */
  private stopListening(): void {
    this.server?.close();
    this.server = null;
    this.unixServer?.close();
    this.unixServer = null;
  }

  /**
   * Opens a socket to every process of `peers`, in process-list order: each process listens,
   * sends its address to every process after it in the list (out-of-band), connects to every
   * process before it, and accepts the rest. Nobody waits on a process later in the list before
   * having sent its own address, so the set-up cannot deadlock; a missing peer fails with a
   * timeout. A connection is registered when its handshake is done (`established`); one that
   * replaces an older connection to the same peer takes over its protocol state then.
   */
  private async connectMesh(peerList: readonly Proc[]): Promise<void> {
    const me = this.host.myProc;
    const rt = this.host.runtime;
    const mine = await this.listening();
    const peers = [...peerList].sort((a, b) => a.listIndex - b.listIndex);
    const later = peers.filter((p) => p.listIndex > me.listIndex);
    const earlier = peers.filter((p) => p.listIndex < me.listIndex);

    const accepted = later.map(
      (proc) =>
        new Promise<Connection>((resolve) => {
          this.waitingAccept.set(proc.gps.grank, { proc, resolve });
        }),
    );
    for (const proc of later) {
      await rt.oobSend(proc.gps.grank, OobTag.RPI_SETUP, mine);
    }
    const timeout = this.settings.connectTimeout;
    const deadline = (what: string) =>
      new Promise<never>((_, reject) => {
        const t = setTimeout(
          () =>
            reject(
              new MpiError(
                ErrorClass.ERR_OTHER,
                `rpi tcp: timed out after ${timeout} ms waiting for ${what} (rpi_tcp_connect_timeout)`,
              ),
            ),
          timeout,
        );
        t.unref();
      });
    for (const proc of earlier) {
      const info = await Promise.race([
        rt.oobRecv<PeerAddress>(proc.gps.grank, OobTag.RPI_SETUP),
        deadline(`the address of ${proc.describe()}`),
      ]);
      const conn = Connection.connect(
        this,
        proc,
        this.dialTarget(proc, info),
        this.settings.noDelay,
      );
      await Promise.race([
        conn.ready.catch((err: Error) => {
          throw new MpiError(
            ErrorClass.ERR_OTHER,
            `rpi tcp: cannot connect to ${proc.describe()} at ${info.host}:${info.port}: ${err.message}`,
          );
        }),
        deadline(`the connection to ${proc.describe()}`),
      ]);
    }
    const waiting = later.map((p) => p.describe()).join(', ');
    await Promise.race([
      Promise.all(accepted),
      deadline(`connections from ${waiting || 'nobody'}`),
    ]);
    for (const p of peers) p.mode |= ProcMode.RPI_CONNECT;
    // Everyone expected is connected: stop listening until the next addprocs.
    this.stopListening();
    this.host.verbose(10, `tcp: rank ${this.myRank} connected to ${peers.length} peers`);
  }

  /**
   * Lazy mode: one exchange of listener addresses through the launcher (every process of the job
   * takes part, so every process must open its transports in the same order), no connection.
   * The listener stays open: peers connect on their first send. The link manager exists before
   * the exchange: a peer whose exchange returned first may dial already (its hello is parked).
   */
  private async publishAddress(procs: Proc[]): Promise<void> {
    const me = this.host.myProc;
    if (this.links === null) {
      this.links = new LazyLinks(this.lazyOwner(), me, this.settings.connectTimeout);
    }
    const mine = await this.listening();
    const all = await this.host.runtime.allgather(mine);
    for (const p of procs) {
      const address = all[p.gps.grank];
      if (p === me || address === undefined) continue;
      this.links.add(p, address);
    }
    this.host.verbose(
      10,
      `tcp: rank ${this.myRank} will connect to its ${this.links.peers.length} peers on first use`,
    );
  }

  private lazyOwner() {
    return {
      dial: (proc: Proc, at: PeerAddress) =>
        Connection.connect(this, proc, this.dialTarget(proc, at), this.settings.noDelay),
      adopt: (proc: Proc, conn: Connection) => {
        if (this.holding) conn.hold(); // a checkpoint holds every connection, new ones too
        this.conns.set(proc, conn);
        proc.mode |= ProcMode.RPI_CONNECT;
      },
      startQueued: (req: RpiRequest) => this.start(req),
      fail: (proc: Proc, reason: string) => this.host.peerFailed(proc, reason),
      verbose: (level: number, message: string) => this.host.verbose(level, message),
    };
  }

  private listen(address: string): Promise<net.Server> {
    const server = net.createServer({ pauseOnConnect: true }, (socket) => {
      Connection.accept(this, socket, this.settings.noDelay);
    });
    server.on('error', () => {});
    server.unref(); // MPI.init keeps the process alive while it waits for connections
    return new Promise((resolve, reject) => {
      server.once('error', (err) =>
        reject(
          new MpiError(
            ErrorClass.ERR_OTHER,
            `rpi tcp: cannot listen on ${address}: ${err.message}; set rpi_tcp_address`,
          ),
        ),
      );
      server.listen(0, address, () => resolve(server));
    });
  }

  /** ConnectionOwner: who is this acceptor's peer? Only expected, not yet connected ranks. */
  acceptPeer(conn: Connection, hello: Hello): Proc | null | 'later' {
    if (this.links !== null) {
      if (this.finalizing) return null;
      const known = [...this.conns.keys()].some((p) => p.gps.grank === hello.from);
      return known ? null : this.links.admit(conn, hello.from);
    }
    const w = this.waitingAccept.get(hello.from);
    return w ? w.proc : null;
  }

  /**
   * A connection finished its handshake: it becomes the peer's connection. One that replaces
   * an older connection (reconnect) takes over its protocol state and held writes first, in
   * the same turn, so nothing can be written to it before them.
   */
  established(conn: Connection): void {
    const proc = conn.proc!;
    this.tuneSocket(conn);
    const fellBack =
      conn.unixFailure === '' ? '' : ` (its Unix socket failed: ${conn.unixFailure})`;
    this.host.verbose(
      10,
      `tcp: rank ${this.myRank} to rank ${proc.gps.grank} over ${conn.via}${fellBack}`,
    );
    if (this.links !== null && !this.conns.has(proc)) {
      // First use: the link manager decides whether this is the peer's one connection.
      if (!this.links.established(conn)) conn.socket.destroy(); // its peer was dropped meanwhile
      return;
    }
    const old = this.conns.get(proc);
    if (old !== undefined && old !== conn) conn.adopt(old);
    this.conns.set(proc, conn);
    const w = this.waitingAccept.get(proc.gps.grank);
    if (w) {
      this.waitingAccept.delete(proc.gps.grank);
      w.resolve(conn);
    }
  }

  /**
   * Sets the socket's kernel buffers: rpi_tcp_sndbuf / rpi_tcp_rcvbuf if asked to, else
   * rpi_tcp_unix_sndbuf for a Unix-socket connection.
   */
  private tuneSocket(conn: Connection): void {
    const unix = conn.via === 'unix' && this.settings.tuneUnixSocket !== null;
    const tune = unix ? this.settings.tuneUnixSocket : this.settings.tuneSocket;
    const peer = conn.proc!.describe();
    if (tune === null) {
      if (conn.via === 'unix' && this.settings.unixUntuned !== '')
        this.host.verbose(
          10,
          `tcp: socket to ${peer}: kernel's buffers (${this.settings.unixUntuned})`,
        );
      return;
    }
    try {
      const got = tune(conn.socket);
      this.host.verbose(
        10,
        `tcp: socket to ${peer}: kernel buffers send ${got.sndbuf}, receive ${got.rcvbuf} bytes`,
      );
      const asked = unix ? this.settings.unixBuffers : this.settings.socketBuffers;
      const cut = cappedBuffers(asked, got);
      // rpi_tcp_unix_sndbuf is a default, cut on most machines (wmem_max): said, not warned.
      if (cut !== null && unix) this.host.verbose(10, cut);
      else if (cut !== null && !this.warnedCapped) {
        this.warnedCapped = true;
        process.emitWarning(cut, 'SsiWarning');
      }
    } catch (err) {
      // The socket went away meanwhile: its close is reported as usual.
      this.host.verbose(10, `tcp: socket to ${peer}: buffers not set: ${(err as Error).message}`);
    }
  }

  closed(conn: Connection, reason: string): void {
    const proc = conn.proc;
    if (!proc || this.conns.get(proc) !== conn) {
      this.links?.closedEarly(conn, reason); // a dial or accept not established yet, or refused
      return;
    }
    if (this.finalizing || conn.closing) return;
    if (conn.holding) {
      // A frozen job (a checkpoint): a restart may replace the connection (its process image
      // outlived its sockets); the loss counts only if the job goes on over it (releaseWrites).
      this.lostWhileHeld.set(conn, reason);
      return;
    }
    this.lose(conn, reason);
  }

  /** The peer of an established connection is gone: fail what involves it. */
  private lose(conn: Connection, reason: string): void {
    const proc = conn.proc!;
    proc.mode &= ~ProcMode.RPI_CONNECT;
    conn.credits.clear();
    for (const [id, req] of this.sends) if (req.proc === proc) this.sends.delete(id);
    for (const [id, req] of this.bodies) if (req.proc === proc) this.bodies.delete(id);
    this.host.peerFailed(proc, reason);
  }

  // ---- request life cycle (C.2.7-2.10) ------------------------------------------------------

  build(req: RpiRequest): void {
    req.rpi = 0;
  }

  destroy(req: RpiRequest): void {
    if (req.isSend) {
      this.sends.delete(req.id);
      this.links?.unqueue(req);
    } else {
      this.bodies.delete(req.id);
      this.settleCredit(req);
    }
    req.rpi = 0;
  }

  advance(): boolean {
    return false;
  }

  /** A send to another process (receives and sends to self are the MPI layer's). */
  start(req: RpiRequest): void {
    req.rpi = 0;
    const proc = req.proc!;
    const conn = this.conns.get(proc);
    if (conn === undefined && this.links?.serves(proc) && !(proc.mode & ProcMode.DEAD)) {
      this.links.queue(req); // first use: started once the connection is up
      return;
    }
    if (!conn || proc.mode & ProcMode.DEAD) {
      req.error = new MpiError(
        ErrorClass.ERR_OTHER,
        `rpi tcp: no connection to ${proc.describe()} (lost or never established)`,
      );
      this.host.complete(req);
      return;
    }
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
        this.sendEagerTracked(
          conn,
          req,
          EnvFlag.SHORT | (sync ? EnvFlag.SSEND : 0) | kindBits,
          credit,
        );
        return;
      }
      // Rendezvous: request to send; the body follows the receiver's clear to send (or a credit
      // that crossed the request).
      this.sends.set(req.id, req);
      conn.writeSmall(
        len,
        req.tag,
        EnvFlag.LONG | kindBits,
        req.myRank,
        req.cid,
        req.seq,
        req.id,
        0,
        null,
      );
      return;
    }
    conn.credits.noteSent();
    const flags = EnvFlag.SHORT | (sync ? EnvFlag.SSEND : 0) | kindBits;
    if (len <= this.settings.copyLimit && req.gather === null) {
      conn.writeSmall(len, req.tag, flags, req.myRank, req.cid, req.seq, req.id, 0, req.buf);
      if (!sync) {
        this.host.complete(req);
        return;
      }
      req.rpi = S_FLUSHED | S_NEED_ACK;
      req.state = ReqState.ACTIVE;
      this.sends.set(req.id, req);
      return;
    }
    this.sendEagerTracked(conn, req, flags, 0);
  }

  /** An eager message whose payload goes out without a copy; done once flushed (and acknowledged). */
  private sendEagerTracked(conn: Connection, req: RpiRequest, flags: number, credit: number): void {
    const payload = this.payloadOf(req);
    req.rpi = flags & EnvFlag.SSEND ? S_NEED_ACK : 0;
    req.state = ReqState.ACTIVE;
    this.sends.set(req.id, req);
    const { tag, myRank, cid, seq, id } = req;
    const len = sendLength(req);
    if (conn.writeTracked(req, len, tag, flags, myRank, cid, seq, id, credit, payload)) {
      this.sendFlushed(req);
    }
  }

  /** ConnectionOwner: a tracked payload reached the kernel. */
  sendFlushed(req: RpiRequest): void {
    if (this.sends.get(req.id) !== req) return; // completed meanwhile (cancelled, failed)
    const bits = (req.rpi as number) | S_FLUSHED;
    req.rpi = bits;
    if (bits & S_NEED_ACK && !(bits & S_ACKED)) return;
    this.sends.delete(req.id);
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
    const conn = this.conns.get(proc);
    if (conn === undefined) return;
    const credits = conn.credits;
    const id = credits.grant();
    req.rpi = id;
    const { tag, cid } = req;
    conn.writeSmall(room, tag, EnvFlag.READY, this.myRank, cid, credits.received, 0, id, null);
  }

  /** A receive holding a credit matched, was cancelled or went away: the credit is used up. */
  private settleCredit(req: RpiRequest): number {
    const id = req.rpi as number;
    if (!id) return 0;
    req.rpi = 0;
    this.conns.get(req.proc!)?.credits.settle();
    return id;
  }

  /**
   * A receive took an unexpected message this module queued (its status is recorded): answer a
   * request to send, acknowledge a synchronous send, deliver the payload or redirect the rest of
   * it into the receive buffer.
   */
  matched(req: RpiRequest, m: UnexpectedMessage): void {
    req.rpi = 0;
    const conn = this.conns.get(m.proc)!;
    const sid = m.extra as number;
    if (m.flags & (EnvFlag.LONG | EnvFlag.SSEND)) conn.unexpectedBySid.delete(sid);
    if (m.flags & EnvFlag.LONG && m.data === null) {
      this.acceptLong(conn, req, m.tag, m.length, m.seq, sid);
      return;
    }
    // An eager message, or a request to send whose body came on a crossing credit.
    if (m.flags & EnvFlag.SSEND) {
      conn.writeSmall(0, m.tag, EnvFlag.ACK, this.myRank, m.cid, m.seq, sid, req.id, null);
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
    conn.writeSmall(
      length,
      tag,
      EnvFlag.ACK | EnvFlag.LONG,
      this.myRank,
      req.cid,
      seq,
      sid,
      req.id,
      null,
    );
  }

  // ---- incoming traffic -----------------------------------------------------------------------

  onEnvelope(conn: Connection, env: WireEnvelope): void {
    const proto = env.flags;
    const proc = conn.proc!;
    if (proto & EnvFlag.SHORT) {
      conn.credits.countReceived();
      const req = this.host.matchPosted(proc, env);
      if (req === null) {
        this.queueEager(conn, proc, env);
        return;
      }
      const { tag, cid, seq, sid, length } = env;
      this.settleCredit(req);
      if (proto & EnvFlag.SSEND) {
        conn.writeSmall(0, tag, EnvFlag.ACK, this.myRank, cid, seq, sid, req.id, null);
      }
      if (req.buf === null && req.scatter === null) req.buf = allocMessage(length);
      if (length === 0) this.host.complete(req);
      else {
        req.state = ReqState.ACTIVE;
        this.expectFor(conn, req, length);
      }
      return;
    }
    if (proto & EnvFlag.SECOND) {
      this.onBody(conn, env.length, env.sid);
      return;
    }
    if (proto & EnvFlag.READY) {
      if (proto & EnvFlag.CANCEL) conn.credits.withdraw(env.rid);
      else if (this.settings.credits) {
        const crossed = conn.credits.hold(env.rid, env.cid, env.tag, env.length, env.seq);
        if (crossed !== null) this.sendBodyUnasked(conn, crossed);
      }
      return;
    }
    if (proto & EnvFlag.CANCEL) {
      this.onCancel(conn, proto, env.tag, env.cid, env.seq, env.sid);
      return;
    }
    if (proto & EnvFlag.ACK) {
      this.onAck(conn, proto, env.seq, env.sid, env.rid);
      return;
    }
    if (proto & EnvFlag.LONG) {
      conn.credits.countReceived();
      const req = this.host.matchPosted(proc, env);
      if (req !== null) {
        this.settleCredit(req);
        this.acceptLong(conn, req, env.tag, env.length, env.seq, env.sid);
        return;
      }
      const m = new UnexpectedMessage(proc, env, proto);
      m.extra = env.sid;
      conn.unexpectedBySid.set(env.sid, m);
      this.host.queueUnexpected(m);
    }
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

  /** An acknowledgement: clear to send, or the receipt of a synchronous send. */
  private onAck(conn: Connection, proto: number, seq: number, sid: number, rid: number): void {
    const req = this.sends.get(sid);
    if (req === undefined) return;
    if (proto & EnvFlag.LONG) {
      // Clear to send: the body goes out now, unless a crossing credit sent it already (the
      // answer may then come after the request completed: the sequence number tells).
      if (req.seq !== seq || req.proc !== conn.proc || (req.rpi as number) & S_UNASKED) return;
      this.askedSends++;
      req.rpi = (req.rpi as number) & ~S_CANCELING;
      this.sendBody(conn, req, rid);
      return;
    }
    const bits = (req.rpi as number) | S_ACKED;
    req.rpi = bits;
    if (bits & S_FLUSHED) {
      this.sends.delete(sid);
      this.host.complete(req);
    }
  }

  /**
   * A rendezvous body: for the receive that answered its request to send, or, when it came on a
   * crossing credit before any receive matched the request, for the unexpected message.
   */
  private onBody(conn: Connection, length: number, sid: number): void {
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

  /** A credit crossed our request to send: the body goes now, without waiting to be asked. */
  private sendBodyUnasked(conn: Connection, req: RpiRequest): void {
    if (this.sends.get(req.id) !== req || req.proc !== conn.proc) return; // done meanwhile
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
    if (conn.writeTracked(req, len, tag, flags, myRank, cid, seq, id, rid, payload)) {
      this.sendFlushed(req);
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

  bodyDone(_conn: Connection, req: RpiRequest): void {
    this.host.complete(req);
  }

  unexpectedDone(_conn: Connection, m: UnexpectedMessage): void {
    const req = m.waiting;
    if (req === null) return;
    m.waiting = null;
    if (req.buf !== m.data) deliverBytes(req, m.data!, true);
    this.host.complete(req);
  }

  // ---- cancel, fast path ---------------------------------------------------------------------

  /** The user cancelled a send: ask the receiver to drop it while it has not matched it. */
  cancel(req: RpiRequest): void {
    if (this.links?.unqueue(req)) {
      // Still waiting for its connection: nothing went out, so it is taken back at once.
      req.cancelled = true;
      this.host.complete(req);
      return;
    }
    const bits = req.rpi as number;
    const waitingReceiver =
      this.sends.get(req.id) === req &&
      ((req.state === ReqState.START && sendLength(req) > this.settings.short) ||
        (bits & S_NEED_ACK && !(bits & S_ACKED)));
    if (!waitingReceiver || bits & S_CANCELING) return;
    req.rpi = bits | S_CANCELING;
    this.conns
      .get(req.proc!)
      ?.writeSmall(0, req.tag, EnvFlag.CANCEL, req.myRank, req.cid, req.seq, req.id, 0, null);
  }

  /** A cancelled receive's credit: the sender must not use it (if it has, the message is buffered). */
  unposted(req: RpiRequest): void {
    const id = this.settleCredit(req);
    if (id === 0) return;
    const { tag, cid } = req;
    this.conns
      .get(req.proc!)
      ?.writeSmall(0, tag, EnvFlag.READY | EnvFlag.CANCEL, this.myRank, cid, 0, 0, id, null);
  }

  private onCancel(
    conn: Connection,
    proto: number,
    tag: number,
    cid: number,
    seq: number,
    sid: number,
  ) {
    if (!(proto & EnvFlag.ACK)) {
      // The sender asks to take message `sid` back: possible while no receive has matched it.
      const m = conn.unexpectedBySid.get(sid);
      const ok = m !== undefined && this.host.withdrawUnexpected(m);
      if (ok) conn.unexpectedBySid.delete(sid);
      const reply = EnvFlag.CANCEL | EnvFlag.ACK | (ok ? EnvFlag.CANCELLED : 0);
      conn.writeSmall(0, tag, reply, this.myRank, cid, seq, sid, 0, null);
      return;
    }
    const req = this.sends.get(sid);
    if (req === undefined) return;
    req.rpi = (req.rpi as number) & ~S_CANCELING;
    if (proto & EnvFlag.CANCELLED) {
      this.sends.delete(sid);
      req.cancelled = true;
      this.host.complete(req);
    }
  }

  fastsend(req: RpiRequest): boolean {
    const buf = req.buf;
    if (buf === null || buf.byteLength > this.settings.copyLimit) return false; // or gathered
    const conn = this.conns.get(req.proc!);
    if (conn === undefined || req.proc!.mode & ProcMode.DEAD) return false;
    conn.credits.noteSent();
    conn.writeSmall(
      buf.byteLength,
      req.tag,
      EnvFlag.SHORT | (req.kind << KIND_SHIFT),
      req.myRank,
      req.cid,
      req.seq,
      0,
      0,
      buf,
    );
    return true;
  }

  // ---- the transport surface for modules built on tcp (crtcp's drain, sm's off-node path) -----

  get peers(): Proc[] {
    return this.links?.peers ?? [...this.conns.keys()];
  }

  traffic(proc: Proc): TcpTraffic {
    if (this.notConnectedYet(proc)) {
      return {
        sent: 0,
        received: 0,
        queued: 0,
        held: 0,
        messagesSent: 0,
        messagesReceived: 0,
        connection: 0,
      };
    }
    const conn = this.connectionTo(proc, 'traffic');
    return {
      sent: conn.bytesOut,
      received: conn.bytesIn,
      queued: conn.queued,
      held: conn.heldBytes,
      messagesSent: conn.credits.sent,
      messagesReceived: conn.credits.received,
      connection: conn.generation,
    };
  }

  holdWrites(): void {
    this.holding = true;
    for (const conn of this.conns.values()) conn.hold();
  }

  releaseWrites(): void {
    this.holding = false;
    for (const conn of this.conns.values()) conn.release();
    const lost = [...this.lostWhileHeld];
    this.lostWhileHeld.clear();
    for (const [conn, reason] of lost)
      if (this.conns.get(conn.proc!) === conn) this.lose(conn, reason);
  }

  async whenFlushed(timeoutMs: number): Promise<void> {
    const conns = [...this.conns.values()];
    const pending = () => conns.filter((c) => c.queued > 0 && !c.socket.destroyed);
    const flushed = (async () => {
      // Rarely anything is queued (the peers read all the time): poll instead of hooking writes.
      while (pending().length > 0) await new Promise((r) => setTimeout(r, 1));
    })();
    await withDeadline(
      flushed,
      timeoutMs,
      () =>
        new MpiError(
          ErrorClass.ERR_OTHER,
          `rpi tcp: whenFlushed: after ${timeoutMs} ms bytes are still queued for ` +
            pending()
              .map((c) => `${c.proc!.describe()} (${c.queued})`)
              .join(', '),
        ),
    );
  }

  async reconnect(): Promise<void> {
    if (this.links !== null) {
      // The collective set-up pairs the processes by their connections, which lazy mode does
      // not keep symmetric while dials are under way: a checkpointing module uses the mesh.
      throw new MpiError(
        ErrorClass.ERR_OTHER,
        'rpi tcp: reconnect needs the eager mesh; this transport connects on first use ' +
          '(open it with openTcpTransport(host, procs, { lazy: false }), or set rpi_tcp_lazy 0)',
      );
    }
    const old = [...this.conns.values()];
    for (const conn of old) {
      const peer = conn.proc!.describe();
      if (!conn.holding) {
        throw new MpiError(
          ErrorClass.ERR_OTHER,
          `rpi tcp: reconnect: the connection to ${peer} is not held; call holdWrites() and drain ` +
            'every connection (traffic/whenReceived) before reconnecting',
        );
      }
      if (!conn.atFrameBoundary) {
        throw new MpiError(
          ErrorClass.ERR_OTHER,
          `rpi tcp: reconnect: a frame from ${peer} is half read; drain every connection ` +
            "(whenReceived with the peer's byte count) before reconnecting",
        );
      }
    }
    // From here on the old connections' ends are expected: no peer failure (see `closed`).
    for (const conn of old) conn.closing = true;
    await this.connectMesh(old.map((c) => c.proc!));
    this.lostWhileHeld.clear(); // replaced: those losses are over
    await Promise.all(old.map((c) => c.close()));
  }

  whenReceived(proc: Proc, bytes: number, timeoutMs: number): Promise<void> {
    if (this.notConnectedYet(proc) && Number.isSafeInteger(bytes) && bytes > 0) {
      // The peer sent something, so its connection is coming: wait for it, then for the bytes.
      const arrived = this.links!.whenConnected(proc).then((c) => c.whenReceived(bytes));
      return withDeadline(
        arrived,
        timeoutMs,
        () =>
          new MpiError(
            ErrorClass.ERR_OTHER,
            `rpi tcp: ${proc.describe()} sent ${bytes} bytes but never connected within ${timeoutMs} ms`,
          ),
      );
    }
    if (this.notConnectedYet(proc) && bytes === 0) return Promise.resolve();
    const conn = this.connectionTo(proc, 'whenReceived');
    if (!Number.isSafeInteger(bytes) || bytes < 0) {
      throw new MpiError(
        ErrorClass.ERR_ARG,
        `rpi tcp: whenReceived(${proc.describe()}, ${bytes}): the byte count must be a non-negative integer`,
      );
    }
    return withDeadline(
      conn.whenReceived(bytes),
      timeoutMs,
      () =>
        new MpiError(
          ErrorClass.ERR_OTHER,
          `rpi tcp: ${proc.describe()} sent ${bytes} bytes but only ${conn.bytesIn} arrived within ${timeoutMs} ms`,
        ),
    );
  }

  /** Lazy mode: a peer of this transport that has not been connected (yet). */
  private notConnectedYet(proc: Proc): boolean {
    return this.links?.serves(proc) === true && !this.conns.has(proc);
  }

  private connectionTo(proc: Proc, call: string): Connection {
    const conn = this.conns.get(proc);
    if (conn === undefined) {
      throw new MpiError(
        ErrorClass.ERR_RANK,
        `rpi tcp: ${call}: no connection to ${proc.describe()} on this transport (peers: ` +
          `${this.peers.map((p) => p.gps.grank).join(', ') || 'none'})`,
      );
    }
    return conn;
  }

  // ---- shutdown (C.2.6) --------------------------------------------------------------------

  async finalize(proc?: Proc): Promise<void> {
    if (proc) {
      this.links?.drop(proc);
      const conn = this.conns.get(proc);
      this.conns.delete(proc);
      if (conn) await conn.close();
      return;
    }
    this.finalizing = true;
    this.stopListening();
    this.links?.close();
    const s = this.stats;
    this.host.verbose(
      10,
      `tcp: rank ${this.myRank} body bytes read directly ${s.direct}, copied into posted receives ` +
        `${s.copiedPosted}, into unexpected messages ${s.copiedUnexpected}; long messages sent on a ` +
        `credit ${this.creditedSends}, on a crossing credit ${this.crossedSends}, after a clear to send ` +
        `${this.askedSends}; sends gathered ${this.gatheredSends} from ${this.gatheredRanges} ranges; ` +
        `receives scattered ${s.scatteredRecvs} (bytes copied in chunks ${s.scatteredBytes}); ` +
        `socket reads ${s.reads}`,
    );
    await Promise.all([...this.conns.values()].map((c) => c.close()));
    this.conns.clear();
  }
}

/** Bytes of a send: its buffer's, or the total of its gather ranges (`req.buf` is null then). */
function sendLength(req: RpiRequest): number {
  return req.gather === null ? req.buf!.byteLength : req.gatherLength;
}
