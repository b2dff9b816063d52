import type { Proc, RpiActions } from '@ssi/mpi';

/**
 * The version of the tcp transport surface: what modules built on tcp (crtcp, sm's off-node
 * path, third parties) may rely on. Same rules as SSI type APIs: a minor adds, a major breaks.
 */
export const TCP_TRANSPORT_API = '1.2.0';

/** Since 1.2: how `openTcpTransport` sets up connections. */
export interface TcpTransportOptions {
  /**
   * true: connect to a peer on the first send to it; false: the full mesh during `addprocs`
   * (needed by `reconnect`). Default: the `rpi_tcp_lazy` parameter.
   */
  lazy?: boolean;
}

/**
 * One connection's counters. Bytes count everything written and read on the current connection
 * (handshake too); a reconnect starts them again from 0 on both sides.
 */
export interface TcpTraffic {
  /** Bytes handed to the socket (held writes are not counted until released). */
  sent: number;
  /** Bytes read from the socket and handled. */
  received: number;
  /** Since 1.1: bytes handed to the socket that have not reached the kernel yet. */
  queued: number;
  /** Since 1.1: bytes of writes held back by `holdWrites` (not yet handed to the socket). */
  held: number;
  /** Since 1.1: MPI messages (eager envelopes and requests to send) written, mod 2^32. */
  messagesSent: number;
  /** Since 1.1: MPI messages read, mod 2^32. */
  messagesReceived: number;
  /** Since 1.1: which connection to this peer this is: 1, plus one per `reconnect`. */
  connection: number;
}

/**
 * The tcp rpi as a transport another module drives (DESIGN.md §6a: compose through public
 * surfaces). It is the full set of rpi actions for the peers it was opened for, sharing the MPI
 * layer's matching with whatever else the module drives, plus what a checkpointing module needs:
 *
 * - Route every action for a peer to the transport that has the peer (`peers`): `start`,
 *   `cancel`, `fastsend` of sends to it, `matched` of unexpected messages from it (`msg.proc`),
 *   `posted` / `unposted` / `destroy` of receives naming it (`req.proc`). An ANY_SOURCE receive
 *   needs no transport: the MPI layer matches it across all of them.
 * - A drain (crtcp, Fig. 7.8): each side sends its `traffic(peer).sent` to the peer out of band
 *   and waits `whenReceived(peer, theirSent)`; then nothing of that peer is in flight, and every
 *   message it sent is matched or queued in the MPI layer.
 */
export interface TcpTransport extends RpiActions {
  /** `TCP_TRANSPORT_API` of the tcp package that made it. */
  readonly transportApi: string;
  /** The peers this transport has a connection to. */
  readonly peers: readonly Proc[];
  /** Bytes written to and read from `proc`'s connection so far. */
  traffic(proc: Proc): TcpTraffic;
  /**
   * Resolves once `bytes` bytes in all have been read from `proc` and handled; rejects after
   * `timeoutMs`, naming the peer and both counts.
   */
  whenReceived(proc: Proc, bytes: number, timeoutMs: number): Promise<void>;
  /**
   * Since 1.1. From now on every write the protocol starts by itself on any connection
   * (clear to send, rendezvous bodies, acknowledgements, credits, cancel answers) is held back,
   * neither written nor counted in `sent`, until `releaseWrites`: with no new MPI call (a
   * checkpoint's closed entry gate) the counters then stop moving, and a drain can settle.
   * Reading goes on as usual.
   */
  holdWrites(): void;
  /** Since 1.1. Writes what was held, in the order it was started, and stops holding. */
  releaseWrites(): void;
  /**
   * Since 1.1. Resolves once every byte handed to the sockets reached the kernel (`queued` is
   * 0 everywhere); rejects after `timeoutMs`, naming the peers and their queued bytes.
   */
  whenFlushed(timeoutMs: number): Promise<void>;
  /**
   * Since 1.1. Replaces every connection by a new one to the same peer, set up as at init with
   * the processes' current addresses (`Proc.host`, `rpi_tcp_address`; exchanged out of band),
   * then closes the old ones. Every peer must call it at the same time (a collective over the
   * transport's peers). Needs held writes and drained connections (nothing half read): rejects,
   * saying which, otherwise. The new connections take over the protocol state of the old ones
   * and keep what was held, for `releaseWrites`; credits a peer gave are dropped (the peer's
   * receive then gets a request to send: a credit only saves a round trip). Byte counters start
   * again from 0 on both sides.
   */
  reconnect(): Promise<void>;
}
