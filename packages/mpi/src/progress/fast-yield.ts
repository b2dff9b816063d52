/**
 * Event-loop fairness for calls that complete without waiting (issue 18). A blocking send that
 * takes the rpi's fast path, or a receive whose message is already here, resolves at once, and
 * a resolved promise continues its `await` as a microtask: a loop of such calls never lets the
 * event loop read a socket, so the process never sees an incoming message (a "stop" from a
 * peer) and the peer's replies pile up unread. Every `every`-th call in a row that completed at
 * once therefore resolves after one event-loop turn (`setImmediate`) instead. A call that waits
 * lets the event loop run anyway and starts a new count, so a ping-pong never pays the turn.
 */
export class FastYield {
  private streak = 0;

  constructor(
    /** Calls completing at once in a row before one yields (0: never yield). */
    readonly every: number,
  ) {}

  /** A call completed at once; true when this one must yield to the event loop. */
  completedAtOnce(): boolean {
    if (this.every <= 0 || ++this.streak < this.every) return false;
    this.streak = 0;
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
