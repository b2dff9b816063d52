/**
 * Event-loop fairness for calls that complete without waiting (issue 18). A blocking send that
 * takes the rpi's fast path, or a receive whose message is already here, resolves at once, and
 * a resolved promise continues its `await` as a microtask: a loop of such calls never lets the
 * event loop read a socket, so the process never sees an incoming message (a "stop" from a
 * peer) and the peer's replies pile up unread. Every `every`-th call in a row that completed at
 * once therefore resolves after one event-loop turn (`setImmediate`) instead, unless such a turn
 * was taken less than `minGapMs` ago. A call that waits lets the event loop run anyway and
 * starts a new count, so a tcp ping-pong never pays the turn.
 *
 * Why the time floor: a shared-memory ping-pong completes every call at once (it spins in the
 * call) at about 1 µs a call, and a turn costs about 7 µs, paid by the peer too: every 64 calls
 * that was a fifth of the one-way time (sm spin 8 B 0.94-1.04 µs against 0.71-0.80 without the
 * turns). At most one turn per millisecond still lets a "stop" in within a millisecond. The clock
 * is read only at every `every`-th call.
 */
export class FastYield {
  private streak = 0;
  /** When the last turn was asked for (ms, `now()`), -Infinity: never. */
  private lastTurn = Number.NEGATIVE_INFINITY;

  constructor(
    /** Calls completing at once in a row before one yields (0: never yield). */
    readonly every: number,
    /** At most one turn per this many ms (0: every `every`-th call). */
    readonly minGapMs = 0,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A call completed at once; true when this one must yield to the event loop. */
  completedAtOnce(): boolean {
    if (this.every <= 0 || ++this.streak < this.every) return false;
    this.streak = 0;
    if (this.minGapMs > 0) {
      const t = this.now();
      if (t - this.lastTurn < this.minGapMs) return false;
      this.lastTurn = t;
    }
    return true;
  }

  /** A call waited (the event loop ran): the count starts again. */
  waited(): void {
    this.streak = 0;
  }
}

/** Resolves after one turn of the event loop (its poll phase included). */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}
