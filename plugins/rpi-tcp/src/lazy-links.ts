import type { Proc, RpiRequest } from '@ssi/mpi';
import type { Connection } from './connection';

/** A peer's listener, learned at MPI.init (lazy mode exchanges addresses, not connections). */
export interface PeerAddress {
  host: string;
  port: number;
  /** Its abstract Unix socket name for peers on its node (`rpi_tcp_unix`), if it listens on one. */
  unix?: string;
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

/**
 * Where the connection to one peer stands (a peer without a `Link` is idle, or connected: then
 * the module has its connection).
 *
 *  - `dialing`: our dial is under way (`conn` is it).
 *  - `accepting`: the peer's dial was admitted; its handshake is under way (`conn` is it).
 *  - `awaiting`: our dial was refused by the tie-break; the peer's own dial is coming.
 */
type LinkState = 'dialing' | 'accepting' | 'awaiting';

/** One peer without an established connection, with sends or drain callers waiting for it. */
interface Link {
  state: LinkState;
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
 * until the connection is authenticated. A receive posted for a named peer with no connection
 * dials it too (`prepare`, unless `rpi_tcp_recv_dial` is 0), so that the peer's first message
 * usually finds the connection up. A peer that is never spoken to nor named by a receive is
 * never connected.
 *
 * Per peer, at this process (E: the earlier process of the pair in the process list, L: the later):
 *
 *     unknown ──add──▶ idle ──send──▶ dialing ──RESPONSE/PROOF──▶ connected
 *        │hello: parked  │hello: admit    │ hello, E: abandon our dial, admit ─▶ accepting
 *        ▼ (answered at add)              │ hello, L: refuse it (ours wins)
 *                        ▼                │ closed after reaching the peer, E: ─▶ awaiting
 *                     accepting ──PROOF──▶ connected   (L's hello comes: admit ─▶ accepting)
 *
 * (`send`: a send to the peer starts, or a receive naming it is posted: `queue`, `prepare`.)
 *
 * **Tie-break when both ends dial at once** (the order of Ch. 5.1.2, as in the eager mesh: the
 * later process connects to the earlier one): L, while its own dial is under way, refuses E's
 * hello; E, when L's hello arrives while it dials, abandons its own dial and admits L's. Either
 * way one connection survives and the sends queued at both ends go out on it in start order.
 * A dial of E that reached L and was closed unanswered is that refusal (L refuses for no other
 * reason while it runs): E waits for L's dial, bounded by `rpi_tcp_connect_timeout`.
 *
 * **A hello before the addresses are known**: a fast process may dial one whose allgather has not
 * returned yet. Such a hello is parked (not answered, not refused: a refusal would read as the
 * tie-break at E and leave it waiting for a dial that never comes) until `add` names its peer.
 */
export class LazyLinks {
  private readonly addresses = new Map<Proc, PeerAddress>();
  private readonly byRank = new Map<number, Proc>();
  private readonly links = new Map<Proc, Link>();
  /** Hellos from ranks not added yet, answered by `add` (or refused by `close`). */
  private parked: { conn: Connection; from: number }[] = [];
  private closed = false;

  constructor(
    private readonly owner: LazyLinksOwner,
    private readonly me: Proc,
    private readonly timeoutMs: number,
  ) {}

  /** `proc` is served by this transport at `address`; a hello it sent already is answered now. */
  add(proc: Proc, address: PeerAddress): void {
    this.addresses.set(proc, address);
    this.byRank.set(proc.gps.grank, proc);
    const mine = this.parked.filter((p) => p.from === proc.gps.grank);
    if (mine.length === 0) return;
    this.parked = this.parked.filter((p) => p.from !== proc.gps.grank);
    for (const { conn } of mine) {
      // A dial closed while parked is gone: admitting it would leave a dead link behind.
      if (!conn.socket.destroyed) conn.answerHello(this.admit(conn, proc.gps.grank) as Proc | null);
    }
  }

  /** Every peer this transport serves, connected or not. */
  get peers(): Proc[] {
    return [...this.addresses.keys()];
  }

  serves(proc: Proc): boolean {
    return this.addresses.has(proc);
  }

  /** A send to a peer with no established connection: queued; the peer is dialed if idle. */
  queue(req: RpiRequest): void {
    const proc = req.proc!;
    const link = this.links.get(proc) ?? this.dial(proc, 'a send to it started');
    link.sends.push(req);
    if (link.timer === null) link.timer = this.deadline(proc);
  }

  /**
   * A receive naming `proc` was posted and there is no connection to it: dial it now (if idle),
   * so that the peer's message finds the connection up instead of setting it up (`rpi_tcp_recv_dial`).
   * Nothing waits on such a dial: refused by the tie-break or failed, it is dropped quietly (the
   * peer's own send dials then), and a peer that never sends costs one idle socket.
   */
  prepare(proc: Proc): void {
    if (this.closed || this.links.has(proc) || !this.addresses.has(proc)) return;
    this.dial(proc, 'a receive from it is posted');
  }

  /** Takes a queued send back (it was cancelled or freed); false when it is not queued. */
  unqueue(req: RpiRequest): boolean {
    const link = req.proc === null ? undefined : this.links.get(req.proc);
    const i = link === undefined ? -1 : link.sends.indexOf(req);
    if (i < 0) return false;
    link!.sends.splice(i, 1);
    return true;
  }

  /**
   * Resolves with the connection to `proc` once there is one (the drain of a peer that sent but
   * whose connection is not established here yet). Dials nothing: the peer's dial is coming.
   */
  whenConnected(proc: Proc): Promise<Connection> {
    let link = this.links.get(proc);
    if (link === undefined) {
      link = { state: 'awaiting', conn: null, sends: [], waiters: [], timer: null };
      this.links.set(proc, link);
    }
    const waiting = link;
    return new Promise((resolve) => waiting.waiters.push(resolve));
  }

  /**
   * A hello from rank `from` reached the listener: the peer it claims to be when this side
   * admits the connection (tie-break above), null to refuse it, 'later' to park it.
   */
  admit(conn: Connection, from: number): Proc | null | 'later' {
    if (this.closed) return null;
    const proc = this.byRank.get(from);
    if (proc === undefined) {
      this.parked.push({ conn, from });
      return 'later';
    }
    const link = this.links.get(proc);
    if (link === undefined || link.state === 'awaiting') {
      this.setLink(proc, link, 'accepting', conn);
      return proc;
    }
    if (link.state === 'accepting' || this.me.listIndex > proc.listIndex) return null; // ours wins
    this.owner.verbose(
      10,
      `tcp: rank ${this.me.gps.grank} and ${from} dialed each other: theirs wins`,
    );
    const abandoned = link.conn!;
    this.setLink(proc, link, 'accepting', conn);
    abandoned.socket.destroy();
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
    if (link.sends.length === 0 && link.waiters.length === 0) {
      this.drop(proc);
      return;
    }
    if (conn.dialed && conn.reached && this.me.listIndex < proc.listIndex) {
      // Refused by the tie-break: the peer dials us; its hello is on its way.
      this.owner.verbose(10, `tcp: rank ${proc.gps.grank} refused our dial; awaiting its own`);
      this.setLink(proc, link, 'awaiting', null);
      return;
    }
    if (!conn.dialed) {
      this.owner.verbose(
        10,
        `tcp: rank ${proc.gps.grank}'s dial died in its handshake; dialing it`,
      );
      this.setLink(proc, link, 'dialing', this.owner.dial(proc, this.addresses.get(proc)!));
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

  /** Closes every connection still being set up, refuses parked hellos (module finalize). */
  close(): void {
    this.closed = true;
    for (const proc of [...this.links.keys()]) this.drop(proc);
    for (const { conn } of this.parked) conn.answerHello(null);
    this.parked = [];
  }

  private setLink(
    proc: Proc,
    link: Link | undefined,
    state: LinkState,
    conn: Connection | null,
  ): Link {
    const l = link ?? { state, conn, sends: [], waiters: [], timer: null };
    l.state = state;
    l.conn = conn;
    this.links.set(proc, l);
    return l;
  }

  private dial(proc: Proc, why: string): Link {
    const address = this.addresses.get(proc)!;
    this.owner.verbose(
      10,
      `tcp: rank ${this.me.gps.grank} connects to rank ${proc.gps.grank} at ${address.host}:${address.port} on first use (${why})`,
    );
    return this.setLink(proc, undefined, 'dialing', this.owner.dial(proc, address));
  }

  private deadline(proc: Proc): NodeJS.Timeout {
    const t = setTimeout(() => {
      const link = this.links.get(proc);
      this.drop(proc);
      this.owner.fail(
        proc,
        `no connection within ${this.timeoutMs} ms of the first send (rpi_tcp_connect_timeout; ` +
          `the link was ${link?.state ?? 'gone'})`,
      );
    }, this.timeoutMs);
    t.unref(); // the queued sends keep the process alive
    return t;
  }
}
