/** What a checkpoint's drain found on one connection (Fig. 7.8). */
export interface PeerDrain {
  /** The peer's world rank. */
  peer: number;
  /** Bytes this process had written to the peer when the counters were exchanged. */
  sent: number;
  /** Bytes the peer said it had written to this process. */
  theirSent: number;
  /** Bytes this process had read from the peer when the drain ended (equals `theirSent`). */
  received: number;
  /** Of `received`, the bytes read between `interrupt` and the end of the drain. */
  drainedBytes: number;
  /** MPI messages (eager envelopes and requests to send) read in that time. */
  drainedMessages: number;
  /** Bytes still queued in Node for the peer at the end (0: all reached the kernel). */
  queued: number;
  /** Bytes of protocol writes held back for the peer until continue / restart. */
  held: number;
}

/** The last checkpoint's drain in this process: what was on the wire and where it went. */
export interface DrainReport {
  /** This process's world rank. */
  rank: number;
  /** Bytes read from all peers between `interrupt` and the end of the drain. */
  bytes: number;
  /** MPI messages among them; each is now matched or queued in the MPI layer. */
  messages: number;
  /** Milliseconds from the start of `checkpoint` to the end of the drain. */
  ms: number;
  peers: PeerDrain[];
}

/** One line for `rpi_verbose` and for people: `crtcp: rank 1 drained 70144 bytes, ...`. */
export function describeDrain(r: DrainReport): string {
  return (
    `crtcp: rank ${r.rank} drained ${r.bytes} bytes, ${r.messages} messages from ` +
    `${r.peers.length} peers in ${r.ms.toFixed(1)} ms`
  );
}
