import type { Proc, RpiRequest } from '@ssi/mpi';
import type { Connection } from './connection';

/** A peer's listener, learned at MPI.init (lazy mode exchanges addresses, not connections). */
export interface PeerAddress {
  host: string;
  port: number;
}

/** What the link manager needs from the tcp module that owns it. */
export interface LazyLinksOwner {
  /** Starts a connection to `proc`'s listener (the handshake follows on its own). */
  dial(proc: Proc, address: PeerAddress): Connection;
  /** The connection to `proc` is established: it is now the module's connection to it. */
  adopt(proc: Proc, conn: Connection): void;
  /** Starts a send that waited for its connection (the connection is adopted by now). */
  startQueued(req: RpiRequest): void;
  /** No connection to `proc` could be made: its queued sends fail with `reason`. */
  fail(proc: Proc, reason: string): void;
  verbose(level: number, message: string): void;
}

/** One peer without an established connection. */
interface Link {
  /** The connection being set up: our dial, or the peer's, accepted. */
  conn: Connection | null;
  /** Sends to the peer, in the order they were started, waiting for the connection. */
  readonly sends: RpiRequest[];
  /** `whenConnected` callers. */
  readonly waiters: ((conn: Connection) => void)[];
  /** Bounds the wait of the queued sends (rpi_tcp_connect_timeout). */
  timer: NodeJS.Timeout | null;
}

/**
 * Connections on first use (`rpi_tcp_lazy`): every process listens and publishes its address at
 * MPI.init; the first send to a peer dials it, and sends started meanwhile wait here, in order,
 * until the connection is authenticated. A peer that is never spoken to is never connected.
 *
 * **Tie-break when both ends dial at once** (the order of Ch. 5.1.2, as in the eager mesh: the
 * later process in the process list connects to the earlier one): a process decides on a
 * peer's hello before it answers. The later process, while its own dial is under way, refuses
 * the earlier process's hello; the earlier process, when the later one's hello arrives while it
 * dials, adopts that connection and abandons its own dial. Either way one connection survives,
 * and the sends queued at both ends go out on it in the order they were started. A dial of the
 * earlier process that reached the peer but was closed unanswered is that refusal: it waits for
 * the peer's own connection (bounded by `rpi_tcp_connect_timeout`) instead of failing.
 */
export class LazyLinks {
  private readonly addresses = new Map<Proc, PeerAddress>();
  private readonly byRank = new Map<number, Proc>();
  private readonly links = new Map<Proc, Link>();

  constructor(
    private readonly owner: LazyLinksOwner,
    private readonly me: Proc,
    private readonly timeoutMs: number,
  ) {}

  /** `proc` is served by this transport at `address`. */
  add(proc: Proc, address: PeerAddress): void {
    this.addresses.set(proc, address);
    this.byRank.set(proc.gps.grank, proc);
  }

  /** Every peer this transport serves, connected or not. */
  get peers(): Proc[] {
    return [...this.addresses.keys()];
  }

  serves(proc: Proc): boolean {
    return this.addresses.has(proc);
  }

  /** A send to a peer with no established connection: queued; the peer is dialed if need be. */
  queue(req: RpiRequest): void {
    const proc = req.proc!;
    const link = this.linkOf(proc);
    link.sends.push(req);
    if (link.timer === null) link.timer = this.deadline(proc);
    if (link.conn === null) this.dial(proc, link);
  }

  /** Takes a queued send back (it was cancelled or freed); false when it is not queued. */
  unqueue(req: RpiRequest): boolean {
    const link = req.proc === null ? undefined : this.links.get(req.proc);
    const i = link === undefined ? -1 : link.sends.indexOf(req);
    if (i < 0) return false;
    link!.sends.splice(i, 1);
    return true;
  }

  /** Resolves with the connection to `proc` once there is one (the drain of a peer not yet heard). */
  whenConnected(proc: Proc): Promise<Connection> {
    return new Promise((resolve) => this.linkOf(proc).waiters.push(resolve));
  }

  /**
   * A hello from rank `from` reached the listener: the peer it claims to be when this side
   * accepts the connection (tie-break above), or null to refuse it.
   */
  admit(conn: Connection, from: number): Proc | null {
    const proc = this.byRank.get(from);
    if (proc === undefined) return null;
    const link = this.linkOf(proc);
    if (link.conn !== null) {
      const dialing = link.conn.dialed;
      if (!dialing || this.me.listIndex > proc.listIndex) return null; // ours wins
      this.owner.verbose(
        10,
        `tcp: rank ${this.me.gps.grank} and ${from} dialed each other: theirs wins`,
      );
      const abandoned = link.conn;
      link.conn = null;
      abandoned.socket.destroy();
    }
    link.conn = conn;
    return proc;
  }

  /** An authenticated connection: true when it is the one set up for its peer. */
  established(conn: Connection): boolean {
    const proc = conn.proc!;
    const link = this.links.get(proc);
    if (link === undefined || link.conn !== conn) return false;
    this.links.delete(proc);
    if (link.timer !== null) clearTimeout(link.timer);
    this.owner.adopt(proc, conn);
    for (const req of link.sends) this.owner.startQueued(req);
    for (const w of link.waiters) w(conn);
    return true;
  }

  /** A connection closed before it was established. */
  closedEarly(conn: Connection, reason: string): void {
    const proc = conn.proc;
    const link = proc === null ? undefined : this.links.get(proc);
    if (proc === null || link === undefined || link.conn !== conn) return; // refused, abandoned
    link.conn = null;
    if (link.sends.length === 0 && link.waiters.length === 0) {
      this.drop(proc);
      return;
    }
    if (conn.dialed && conn.reached && this.me.listIndex < proc.listIndex) {
      // Refused: the peer dials us (tie-break); its hello is on its way.
      this.owner.verbose(10, `tcp: rank ${proc.gps.grank} refused our dial; awaiting its own`);
      return;
    }
    if (!conn.dialed) {
      this.owner.verbose(
        10,
        `tcp: rank ${proc.gps.grank}'s dial died in its handshake; dialing it`,
      );
      this.dial(proc, link);
      return;
    }
    this.drop(proc);
    this.owner.fail(proc, `cannot connect: ${reason}`);
  }

  /** Forgets `proc` (its module is finalizing it or it failed): nothing more is dialed. */
  drop(proc: Proc): void {
    const link = this.links.get(proc);
    if (link === undefined) return;
    this.links.delete(proc);
    if (link.timer !== null) clearTimeout(link.timer);
    link.conn?.socket.destroy();
  }

  /** Closes every connection still being set up (module finalize). */
  close(): void {
    for (const proc of [...this.links.keys()]) this.drop(proc);
  }

  private linkOf(proc: Proc): Link {
    let link = this.links.get(proc);
    if (link === undefined) {
      link = { conn: null, sends: [], waiters: [], timer: null };
      this.links.set(proc, link);
    }
    return link;
  }

  private dial(proc: Proc, link: Link): void {
    const address = this.addresses.get(proc)!;
    this.owner.verbose(
      10,
      `tcp: rank ${this.me.gps.grank} connects to rank ${proc.gps.grank} at ${address.host}:${address.port} on first use`,
    );
    link.conn = this.owner.dial(proc, address);
  }

  private deadline(proc: Proc): NodeJS.Timeout {
    const t = setTimeout(() => {
      this.drop(proc);
      this.owner.fail(
        proc,
        `no connection within ${this.timeoutMs} ms of the first send (rpi_tcp_connect_timeout)`,
      );
    }, this.timeoutMs);
    t.unref(); // the queued sends keep the process alive
    return t;
  }
}
