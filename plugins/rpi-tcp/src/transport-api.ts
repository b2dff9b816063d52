import type { Proc, RpiActions } from '@ssi/mpi';

/**
 * The version of the tcp transport surface: what modules built on tcp (crtcp, sm's off-node
 * path, third parties) may rely on. Same rules as SSI type APIs: a minor adds, a major breaks.
 */
export const TCP_TRANSPORT_API = '1.0.0';

/** Bytes on one connection, everything written and read included (handshake too). */
export interface TcpTraffic {
  sent: number;
  received: number;
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
}
