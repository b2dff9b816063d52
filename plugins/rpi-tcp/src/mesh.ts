import type { Proc, RpiHost } from '@ssi/mpi';
import { ErrorClass, MpiError, OobTag, ProcMode } from '@ssi/mpi';
import type { Connection } from './connection';
import type { PeerAddress } from './lazy-links';
import type { Listeners } from './listeners';

/**
 * The eager mesh (`rpi_tcp_lazy 0`, crtcp, `reconnect`): a socket to every peer, set up in
 * process-list order. Each process listens, sends its address to every process after it in the
 * list (out-of-band), connects to every process before it, and accepts the rest. Nobody waits on
 * a process later in the list before having sent its own address, so the set-up cannot
 * deadlock; a missing peer fails with a timeout (`rpi_tcp_connect_timeout`).
 */
export class EagerMesh {
  /** Later processes whose connection is awaited, by global rank. */
  private readonly waitingAccept = new Map<
    number,
    { proc: Proc; resolve: (c: Connection) => void }
  >();

  constructor(
    private readonly host: RpiHost,
    private readonly listeners: Listeners,
    private readonly connectTimeout: number,
    /** Starts a connection to `proc` at `at`; `ready` settles when its handshake is done. */
    private readonly dial: (proc: Proc, at: PeerAddress) => Connection,
  ) {}

  /** Connects to every process of `peerList`; stops listening once all are connected. */
  async connect(peerList: readonly Proc[]): Promise<void> {
    const me = this.host.myProc;
    const rt = this.host.runtime;
    const mine = await this.listeners.open();
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
    for (const proc of earlier) {
      const info = await Promise.race([
        rt.oobRecv<PeerAddress>(proc.gps.grank, OobTag.RPI_SETUP),
        this.deadline(`the address of ${proc.describe()}`),
      ]);
      const conn = this.dial(proc, info);
      await Promise.race([
        conn.ready.catch((err: Error) => {
          throw new MpiError(
            ErrorClass.ERR_OTHER,
            `rpi tcp: cannot connect to ${proc.describe()} at ${info.host}:${info.port}: ${err.message}`,
          );
        }),
        this.deadline(`the connection to ${proc.describe()}`),
      ]);
    }
    const waiting = later.map((p) => p.describe()).join(', ');
    await Promise.race([
      Promise.all(accepted),
      this.deadline(`connections from ${waiting || 'nobody'}`),
    ]);
    for (const p of peers) p.mode |= ProcMode.RPI_CONNECT;
    // Everyone expected is connected: stop listening until the next set-up.
    this.listeners.close();
    this.host.verbose(10, `tcp: rank ${me.gps.grank} connected to ${peers.length} peers`);
  }

  /** Rejects after `rpi_tcp_connect_timeout`, naming `what` was awaited. */
  private deadline(what: string): Promise<never> {
    const timeout = this.connectTimeout;
    return new Promise<never>((_, reject) => {
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
  }

  /** The process an acceptor's hello claims to be, if its connection is awaited; else null. */
  expected(rank: number): Proc | null {
    return this.waitingAccept.get(rank)?.proc ?? null;
  }

  /** `proc`'s connection is established: an awaited accept is done. */
  established(proc: Proc, conn: Connection): void {
    const w = this.waitingAccept.get(proc.gps.grank);
    if (w === undefined) return;
    this.waitingAccept.delete(proc.gps.grank);
    w.resolve(conn);
  }
}
