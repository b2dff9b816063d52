import type { Proc, RpiGather, RpiHost, RpiRequest, RpiScatter, WireEnvelope } from '@ssi/mpi';
import {
  EnvFlag,
  ErrorClass,
  MpiError,
  ProcMode,
  type UnexpectedMessage,
  withDeadline,
} from '@ssi/mpi';
import type { ReadStats } from './body-reader';
import type { ConnectionOwner } from './connection';
import { Connection } from './connection';
import { ConnectionTuner } from './connection-tuner';
import { type Hello, rehearseHandshake } from './handshake';
import { LazyLinks, type PeerAddress } from './lazy-links';
import { Listeners } from './listeners';
import { EagerMesh } from './mesh';
import { ReceiveSide } from './receives';
import { ConnectionRehearsal } from './rehearsal';
import { SendSide } from './sends';
import type { TcpSettings } from './settings';
import { TCP_TRANSPORT_API, type TcpTraffic, type TcpTransport } from './transport-api';

/**
 * The tcp rpi: authenticated sockets between the processes (on first use, or a full mesh at
 * set-up), the protocol of `SendSide` and `ReceiveSide` over them, and the transport surface
 * modules built on tcp use (crtcp's drain and reconnect, sm's off-node path). Progress is driven
 * entirely by socket events; nothing polls.
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
  /** `RpiActions.gather`: set unless `rpi_tcp_gather` is 0. */
  readonly gather?: RpiGather;
  /** `RpiActions.scatter`: set unless `rpi_tcp_scatter` is 0. */
  readonly scatter?: RpiScatter;

  private readonly conns = new Map<Proc, Connection>();
  private readonly sends: SendSide;
  private readonly receives: ReceiveSide;
  private readonly listeners: Listeners;
  /** Eager mode: the mesh set-up (also what `reconnect` runs again). */
  private readonly mesh: EagerMesh;
  /** Lazy mode: the peers' addresses and the connections being set up. */
  private links: LazyLinks | null = null;
  /** Lazy mode, in MPI.init: the connection to itself under way (see rehearsal.ts). */
  private rehearsal: ConnectionRehearsal | null = null;
  private rehearsed = false;
  private finalizing = false;
  /** holdWrites was called and releaseWrites not yet. */
  private holding = false;
  /** Connections closed while their writes were held, and why (see `closed`). */
  private readonly lostWhileHeld = new Map<Connection, string>();
  private readonly tuner: ConnectionTuner;

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
    this.sends = new SendSide(host, settings);
    this.tuner = new ConnectionTuner(settings, (level, message) => host.verbose(level, message));
    this.receives = new ReceiveSide(host, settings, (proc) => this.conns.get(proc));
    this.listeners = new Listeners(host, settings, (socket, via) => {
      Connection.accept(this, socket, settings.noDelay, via);
    });
    this.mesh = new EagerMesh(host, this.listeners, settings.connectTimeout, (proc, at) =>
      this.dial(proc, at),
    );
  }

  // ---- set-up (addprocs, C.2.5) --------------------------------------------------------------

  /** Publishes this process's address (lazy), or opens a socket to every new process (eager). */
  async addprocs(procs: Proc[]): Promise<void> {
    const me = this.host.myProc;
    if (this.settings.lazy) await this.publishAddress(procs);
    else await this.mesh.connect(procs.filter((p) => p !== me));
  }

  private dial(proc: Proc, at: PeerAddress): Connection {
    return Connection.connect(
      this,
      proc,
      this.listeners.dialTarget(proc, at),
      this.settings.noDelay,
    );
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
    const mine = await this.listeners.open();
    const exchange = this.host.runtime.allgather(mine);
    // While the addresses travel, the first connection's code runs once (handshake.ts, rehearsal.ts).
    rehearseHandshake(this.secret, this.jobId);
    const once = this.settings.rehearse && !this.rehearsed && procs.some((p) => p !== me);
    this.rehearsed ||= once;
    const rehearsal = once ? this.rehearseConnection(mine) : null;
    const all = await exchange;
    for (const p of procs) {
      const address = all[p.gps.grank];
      if (p === me || address === undefined) continue;
      this.links.add(p, address);
    }
    if (rehearsal !== null) await rehearsal;
    this.host.verbose(
      10,
      `tcp: rank ${this.myRank} will connect to its ${this.links.peers.length} peers on first use`,
    );
  }

  /** Connects to this process's own listener and closes again (rehearsal.ts); never fails. */
  private async rehearseConnection(mine: PeerAddress): Promise<void> {
    const me = this.host.myProc;
    this.rehearsal = new ConnectionRehearsal(me);
    const to = this.listeners.dialTarget(me, mine);
    const said = await this.rehearsal.run(this, to, this.settings.noDelay);
    this.rehearsal = null;
    this.host.verbose(10, `tcp: rank ${this.myRank} ${said}`);
  }

  private lazyOwner() {
    return {
      dial: (proc: Proc, at: PeerAddress) => this.dial(proc, at),
      adopt: (proc: Proc, conn: Connection) => {
        if (this.holding) conn.out.hold(); // a checkpoint holds every connection, new ones too
        this.conns.set(proc, conn);
        proc.mode |= ProcMode.RPI_CONNECT;
      },
      startQueued: (req: RpiRequest) => this.start(req),
      fail: (proc: Proc, reason: string) => this.host.peerFailed(proc, reason),
      verbose: (level: number, message: string) => this.host.verbose(level, message),
    };
  }

  /** ConnectionOwner: who is this acceptor's peer? Only expected, not yet connected ranks. */
  acceptPeer(conn: Connection, hello: Hello): Proc | null | 'later' {
    if (this.rehearsal?.expects(hello.from)) return this.host.myProc;
    if (this.links !== null) {
      if (this.finalizing) return null;
      const known = [...this.conns.keys()].some((p) => p.gps.grank === hello.from);
      return known ? null : this.links.admit(conn, hello.from);
    }
    return this.mesh.expected(hello.from);
  }

  /**
   * A connection finished its handshake: it becomes the peer's connection. One that replaces
   * an older connection (reconnect) takes over its protocol state and held writes first, in
   * the same turn, so nothing can be written to it before them.
   */
  established(conn: Connection): void {
    if (this.rehearsal?.owns(conn)) {
      this.rehearsal.acceptedIt(conn);
      return;
    }
    const proc = conn.proc!;
    this.tuner.tune(conn);
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
    this.mesh.established(proc, conn);
  }

  closed(conn: Connection, reason: string): void {
    if (this.rehearsal?.owns(conn)) {
      this.rehearsal.closed(reason);
      return;
    }
    const proc = conn.proc;
    if (!proc || this.conns.get(proc) !== conn) {
      this.links?.closedEarly(conn, reason); // a dial or accept not established yet, or refused
      return;
    }
    if (this.finalizing || conn.closing) return;
    if (conn.out.holding) {
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
    this.sends.forgetPeer(proc);
    this.receives.forgetPeer(proc);
    this.host.peerFailed(proc, reason);
  }

  // ---- request life cycle (C.2.7-2.10) ------------------------------------------------------

  build(req: RpiRequest): void {
    req.rpi = 0;
  }

  destroy(req: RpiRequest): void {
    if (req.isSend) {
      this.sends.forget(req);
      this.links?.unqueue(req);
    } else this.receives.forget(req);
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
    this.sends.start(conn, req);
  }

  fastsend(req: RpiRequest): boolean {
    const conn = this.conns.get(req.proc!);
    if (conn === undefined || req.proc!.mode & ProcMode.DEAD) return false;
    return this.sends.fastsend(conn, req);
  }

  /** The user cancelled a send: ask the receiver to drop it while it has not matched it. */
  cancel(req: RpiRequest): void {
    if (this.links?.unqueue(req)) {
      // Still waiting for its connection: nothing went out, so it is taken back at once.
      req.cancelled = true;
      this.host.complete(req);
      return;
    }
    this.sends.cancel(this.conns.get(req.proc!), req);
  }

  posted(req: RpiRequest): void {
    this.receives.posted(req);
    const proc = req.proc;
    if (proc !== null && this.settings.recvDial && this.notConnectedYet(proc)) {
      if (!(proc.mode & ProcMode.DEAD) && !this.finalizing) this.links!.prepare(proc);
    }
  }

  unposted(req: RpiRequest): void {
    this.receives.unposted(req);
  }

  matched(req: RpiRequest, m: UnexpectedMessage): void {
    this.receives.matched(req, m);
  }

  // ---- incoming traffic (ConnectionOwner) -----------------------------------------------------

  /** Hands an envelope to the side of the protocol it belongs to. */
  onEnvelope(conn: Connection, env: WireEnvelope): void {
    const proto = env.flags;
    if (proto & EnvFlag.SHORT) this.receives.onEager(conn, env);
    else if (proto & EnvFlag.SECOND) this.receives.onBody(conn, env.length, env.sid);
    else if (proto & EnvFlag.READY) this.sends.onCredit(conn, env);
    else if (proto & EnvFlag.CANCEL) {
      if (proto & EnvFlag.ACK) this.sends.onCancelAnswer(env);
      else this.receives.onCancelRequest(conn, env);
    } else if (proto & EnvFlag.ACK) this.sends.onAck(conn, env);
    else if (proto & EnvFlag.LONG) this.receives.onRequestToSend(conn, env);
  }

  sendFlushed(req: RpiRequest): void {
    this.sends.flushed(req);
  }

  bodyDone(_conn: Connection, req: RpiRequest): void {
    this.receives.bodyDone(req);
  }

  unexpectedDone(_conn: Connection, m: UnexpectedMessage): void {
    this.receives.unexpectedDone(m);
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
      sent: conn.out.bytesOut,
      received: conn.bytesIn,
      queued: conn.out.queued,
      held: conn.out.heldBytes,
      messagesSent: conn.credits.sent,
      messagesReceived: conn.credits.received,
      connection: conn.generation,
    };
  }

  holdWrites(): void {
    this.holding = true;
    for (const conn of this.conns.values()) conn.out.hold();
  }

  releaseWrites(): void {
    this.holding = false;
    for (const conn of this.conns.values()) conn.out.release();
    const lost = [...this.lostWhileHeld];
    this.lostWhileHeld.clear();
    for (const [conn, reason] of lost)
      if (this.conns.get(conn.proc!) === conn) this.lose(conn, reason);
  }

  async whenFlushed(timeoutMs: number): Promise<void> {
    const conns = [...this.conns.values()];
    const pending = () => conns.filter((c) => c.out.queued > 0 && !c.socket.destroyed);
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
              .map((c) => `${c.proc!.describe()} (${c.out.queued})`)
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
      if (!conn.out.holding) {
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
    await this.mesh.connect(old.map((c) => c.proc!));
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
    this.listeners.close();
    this.links?.close();
    const s = this.stats;
    this.host.verbose(
      10,
      `tcp: rank ${this.myRank} body bytes read directly ${s.direct}, copied into posted receives ` +
        `${s.copiedPosted}, into unexpected messages ${s.copiedUnexpected}; ` +
        `${this.sends.summary()}; receives scattered ${s.scatteredRecvs} (bytes copied in ` +
        `chunks ${s.scatteredBytes}); socket reads ${s.reads}`,
    );
    await Promise.all([...this.conns.values()].map((c) => c.close()));
    this.conns.clear();
  }
}
