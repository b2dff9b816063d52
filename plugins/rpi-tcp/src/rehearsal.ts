import type { Proc } from '@ssi/mpi';
import { Connection, type ConnectionOwner, type DialTarget } from './connection';

/**
 * A connection of this process to its own listener, authenticated and closed at once, made in
 * MPI.init while the address exchange is in flight (lazy mode, `rpi_tcp_rehearse`). The first
 * connection to a real peer then runs code that has run before (the dial, the accept and its
 * re-wrapped socket, the handshake's read states, the writer, and Node's net internals under
 * them): the first run in a process, with V8's inline caches empty and Node's lazily set-up
 * internals, cost 1-2 ms of the first message of a pair (measured in the README). The
 * rehearsal goes through the same listener and authentication as any peer; the listener admits
 * a hello from this process's own rank only while the rehearsal is under way (`expects`).
 *
 * It never fails the job: whatever goes wrong (or `timeoutMs` passing) only ends it, with the
 * reason as its result.
 */
/** How long MPI.init lets the rehearsal take (it takes a few ms; slower: given up). */
const REHEARSAL_MS = 1000;

export class ConnectionRehearsal {
  private dialed: Connection | null = null;
  private accepted: Connection | null = null;
  private finish: (outcome: string) => void = () => {};
  private over = false;
  private dialerDone = false;

  constructor(private readonly me: Proc) {}

  /** Whether a hello from rank `from` is the rehearsal's (admitted as this process). */
  expects(from: number): boolean {
    return !this.over && from === this.me.gps.grank;
  }

  /** The accepting side authenticated the rehearsal: done once the dialing side is too. */
  acceptedIt(conn: Connection): void {
    this.accepted = conn;
    if (this.dialerDone) this.end('ok');
  }

  /** Whether `conn` is the rehearsal's accepted connection. */
  owns(conn: Connection): boolean {
    return conn === this.accepted || (conn.proc === this.me && !this.over);
  }

  /** The rehearsal's accepted connection closed (`reason`) before it was done. */
  closed(reason: string): void {
    this.end(`the accepting side closed: ${reason}`);
  }

  /**
   * Dials `to` (this process's own listener) through `owner`'s buffers; resolves when done,
   * with what happened for the verbose output ("rehearsed a connection (…)" or why not).
   */
  async run(
    owner: ConnectionOwner,
    to: DialTarget,
    noDelay: boolean,
    timeoutMs = REHEARSAL_MS,
  ): Promise<string> {
    const done = new Promise<string>((resolve) => {
      this.finish = resolve;
    });
    const timer = setTimeout(() => this.end(`not done within ${timeoutMs} ms`), timeoutMs);
    timer.unref();
    this.dialed = Connection.connect(this.dialerOf(owner), this.me, to, noDelay);
    const outcome = await done;
    clearTimeout(timer);
    const via = to.unix === null ? 'tcp' : 'unix';
    if (outcome === 'ok') return `rehearsed a connection (to itself, over ${via})`;
    return `the connection rehearsal ended: ${outcome}`;
  }

  /** Closes both ends; `outcome`: 'ok', or why it did not complete. */
  private end(outcome: string): void {
    if (this.over) return;
    this.over = true;
    this.dialed?.socket?.destroy();
    this.accepted?.socket?.destroy();
    this.finish(outcome);
  }

  /** The dialing side's owner: the module's buffers and secret; no MPI traffic can come. */
  private dialerOf(owner: ConnectionOwner): ConnectionOwner {
    const unexpected = (what: string) => () => this.end(`unexpected ${what}`);
    return {
      jobId: owner.jobId,
      secret: owner.secret,
      myRank: owner.myRank,
      staging: owner.staging,
      stagingSmall: owner.stagingSmall,
      directMin: owner.directMin,
      stats: owner.stats,
      onEnvelope: unexpected('MPI traffic'),
      bodyDone: unexpected('MPI traffic'),
      unexpectedDone: unexpected('MPI traffic'),
      sendFlushed: () => {},
      acceptPeer: () => null,
      established: () => {
        this.dialerDone = true;
        if (this.accepted !== null) this.end('ok');
      },
      closed: (_conn, reason) => this.end(reason),
    };
  }
}
