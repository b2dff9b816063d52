import type { Proc, RpiRequest, UnexpectedMessage } from '@ssi/mpi';

/** One on-node peer of the sm path. */
export interface PeerState {
  readonly proc: Proc;
  /** Its slot in the segment. */
  readonly index: number;
  /** Queued messages a later ACK / clear to send or cancel names (synchronous or long), by sid. */
  readonly unexpectedBySid: Map<number, UnexpectedMessage>;
  /**
   * Where the body of a queued long message lives in the peer's memory (its request to send
   * offered a single copy, see `single-copy.ts`), by sid, until a receive takes it.
   */
  readonly offers: Map<number, number>;
  /**
   * Receives we sent a clear to send for, in that order: the peer sends their bodies in the
   * order the clears arrive, so its next pool message is the body of the first one.
   */
  readonly bodies: RpiRequest[];
  /** How many of `bodies` already have a body arriving (the endpoint's `intoFor` took them). */
  bodiesStarted: number;
  /**
   * What the peer's next record is the eager body of (an envelope whose payload did not fit its
   * record): a posted receive or a queued message; null when the next record is a new message.
   */
  eagerBodyFor: RpiRequest | UnexpectedMessage | null;
  /**
   * The sends handed to the endpoint's queue (`ep.send`) for this peer, oldest first: the send
   * whose bytes they carry, or null for a control record. The endpoint's `queuedTo` tells how
   * many are not yet written: the older ones are (see `SmSends.reap`).
   */
  readonly queued: (RpiRequest | null)[];
}

/** The on-node peers of this process, by process and by segment slot. */
export class PeerTable {
  private readonly byProc = new Map<Proc, PeerState>();
  /** By slot; this process's own slot is empty. */
  readonly bySlot: (PeerState | undefined)[] = [];

  constructor(localProcs: readonly Proc[], me: Proc) {
    localProcs.forEach((proc, index) => {
      if (proc === me) return;
      const st: PeerState = {
        proc,
        index,
        unexpectedBySid: new Map(),
        offers: new Map(),
        bodies: [],
        bodiesStarted: 0,
        eagerBodyFor: null,
        queued: [],
      };
      this.byProc.set(proc, st);
      this.bySlot[index] = st;
    });
  }

  has(proc: Proc): boolean {
    return this.byProc.has(proc);
  }

  /** The peer state of `proc`, or undefined when it is not on this node (one lookup). */
  find(proc: Proc): PeerState | undefined {
    return this.byProc.get(proc);
  }

  /** The peer state of an on-node process (the caller routed it here). */
  of(proc: Proc): PeerState {
    return this.byProc.get(proc)!;
  }

  get procs(): Proc[] {
    return [...this.byProc.keys()];
  }
}
