/** What the sm path moved and how (`rpi_verbose 10` prints it at finalize; tests read it). */
export interface SmStats {
  /** Eager messages in the envelope's own postbox record. */
  inline: number;
  /** Eager messages whose payload went in the next record. */
  eagerTwoRecords: number;
  /** Long messages sent by rendezvous. */
  rendezvous: number;
  /** Rendezvous bodies that came through the pool straight into the receive buffer. */
  bodiesDirect: number;
  /** Rendezvous bodies this process read out of the sender's memory (single copy). */
  bodiesRead: number;
  /** Long sends of this process the receiver read out of its memory. */
  bodiesTaken: number;
  /** Of `bodiesRead`: those whose tail the sender wrote into our buffer meanwhile. */
  bodiesShared: number;
  /** Tails of our long sends this process wrote into the receiver's buffer. */
  tailsWritten: number;
  /**
   * Times the endpoint's own event (its futex, through the helper thread) woke this process for
   * records that no polling MPI call (spin, the MPI layer's polling window, `test`) had taken.
   */
  wakeups: number;
  /** Blocking receives the fast path (`SmFastRecv`) completed, in place in the postbox. */
  fastReceives: number;
}

export function newStats(): SmStats {
  return {
    inline: 0,
    eagerTwoRecords: 0,
    rendezvous: 0,
    bodiesDirect: 0,
    bodiesRead: 0,
    bodiesTaken: 0,
    bodiesShared: 0,
    tailsWritten: 0,
    wakeups: 0,
    fastReceives: 0,
  };
}

export function describeStats(s: SmStats): string {
  return (
    `sm messages sent inline ${s.inline}, eager in two records ${s.eagerTwoRecords}, ` +
    `by rendezvous ${s.rendezvous}; rendezvous bodies received straight into the receive buffer ` +
    `${s.bodiesDirect}, read from the sender's memory ${s.bodiesRead}, ` +
    `taken from ours ${s.bodiesTaken}; copies shared with the sender ${s.bodiesShared}, ` +
    `tails written into the receiver's ${s.tailsWritten}; ` +
    `woken by the endpoint ${s.wakeups} times; fast receives ${s.fastReceives}`
  );
}
