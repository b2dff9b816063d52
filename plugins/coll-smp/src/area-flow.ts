import type { CollComm, CollRequest } from '@ssi/mpi';

const EMPTY = new Uint8Array(0);

/**
 * The signals of the shared-area algorithms: empty messages on the node's communicator, through
 * the rpi like any message (so they progress, fail and checkpoint like the rest), that say who
 * may touch which slot of the area. They carry no data: the data is in the area.
 */
export class AreaFlow {
  private readonly sends: CollRequest[] = [];

  constructor(private readonly local: CollComm) {}

  /** Tells each of `ranks` (of the node's communicator) `tag`, without waiting. */
  tell(ranks: readonly number[], tag: number): void {
    for (const r of ranks) this.sends.push(this.local.coll.isend(EMPTY, r, tag));
  }

  /** Waits for `tag` from each of `ranks` (in order per sender, as MPI keeps it). */
  async hear(ranks: readonly number[], tag: number): Promise<void> {
    for (const r of ranks) await this.local.coll.recv(EMPTY, r, tag);
  }

  /** Waits until every signal this flow sent has been handed over. */
  async drained(): Promise<void> {
    for (const req of this.sends.splice(0)) await req.wait();
  }
}

/** The ranks of a node's communicator other than `self`. */
export function othersThan(size: number, self: number): number[] {
  const out: number[] = [];
  for (let r = 0; r < size; r++) if (r !== self) out.push(r);
  return out;
}

/** How many pieces of at most `per` units a buffer of `n` units is cut into (at least one). */
export function pieceCount(n: number, per: number): number {
  return Math.max(1, Math.ceil(n / per));
}

const ignore = () => undefined;

/**
 * `p`, marked as handled: pieces are issued before earlier ones are awaited, and a failure of a
 * later one must reach the caller through the final `Promise.all`, not as an unhandled rejection.
 */
export function issued<T>(p: Promise<T>): Promise<T> {
  p.catch(ignore);
  return p;
}
