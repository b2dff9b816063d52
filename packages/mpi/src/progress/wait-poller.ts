import { performance } from 'node:perf_hooks';

/** How often (ms) the poller asks whether the machine still allows polling. */
export const RECHECK_MS = 1000;

/**
 * Polling while an MPI call waits (issue 18). A Node process sleeps in the event loop's poll
 * phase until a socket wakes it: on loopback that sleep and wake-up costs tens of microseconds
 * per message, while a busy event loop (an immediate always pending) makes libuv poll its
 * sockets with timeout 0 and sees a reply microseconds after it lands. So while at least one MPI
 * call waits (a blocking send or receive, `wait`, `waitall`, a blocking probe) the poller keeps
 * one `setImmediate` turn pending, for at most `budgetUs` after the latest wait began; then it
 * stops and the event loop sleeps as before. Nothing waiting, nothing polled: an idle or
 * computing rank costs nothing, and the application's timers and I/O run between turns.
 *
 * The window adapts (like an adaptive mutex's spin): a wait that ended within `budgetUs` doubles
 * it (up to `budgetUs`), a longer one halves it (down to a sixteenth). When the cores are shared
 * (other processes, or a peer on the same core) a spinning rank delays the peer it waits for,
 * its waits grow past the window and polling shrinks to almost nothing by itself.
 *
 * Whether to poll at all depends on the machine (see `choosePolling`), which changes while a job
 * runs: given `recheck`, the poller asks it for a new budget at the first wait after every
 * `RECHECK_MS`.
 */
export class WaitPoller {
  /** MPI calls waiting now. */
  private waits = 0;
  private spinning = false;
  /** `performance.now()` (ms) after which the current window is over. */
  private deadline = 0;
  /** Turns of the event loop made by the poller (for tests and verbose output). */
  turns = 0;
  /** The current window, µs: between `budgetUs / 16` and `budgetUs` (see the class comment). */
  windowUs: number;

  /** Length of the polling window after a wait begins, µs (0: never poll). */
  budgetUs: number;
  /** `performance.now()` (ms) after which the next wait asks `recheck` again. */
  private nextCheck: number;

  constructor(
    budgetUs: number,
    /** The budget as the machine is now (none: `budgetUs` for good). */
    private readonly recheck: (() => number) | null = null,
  ) {
    this.budgetUs = budgetUs;
    this.windowUs = budgetUs;
    this.nextCheck = performance.now() + RECHECK_MS;
  }

  /**
   * An MPI call begins to wait: (re)open the polling window. Returns the time it began, to give
   * to `release`.
   */
  hold(): number {
    this.waits++;
    const now = performance.now();
    if (this.recheck !== null && now >= this.nextCheck) this.check(now);
    if (this.budgetUs <= 0) return now;
    this.deadline = now + this.windowUs / 1000;
    if (!this.spinning) {
      this.spinning = true;
      setImmediate(this.turn);
    }
    return now;
  }

  /** The call's wait that began at `since` is over (completed, or its waiter unregistered). */
  release(since: number): void {
    if (this.waits > 0) this.waits--;
    if (this.budgetUs <= 0) return;
    const tookUs = (performance.now() - since) * 1000;
    this.windowUs =
      tookUs <= this.budgetUs
        ? Math.min(this.budgetUs, this.windowUs * 2)
        : Math.max(this.budgetUs / 16, this.windowUs / 2);
  }

  private check(now: number): void {
    this.nextCheck = now + RECHECK_MS;
    const budget = this.recheck!();
    if (budget === this.budgetUs) return;
    this.budgetUs = budget;
    this.windowUs = budget;
  }

  /** MPI calls waiting now (a polling rpi spins for them between event-loop turns). */
  get waiting(): number {
    return this.waits;
  }

  /** Whether a polling window is open now. */
  get polling(): boolean {
    return this.spinning;
  }

  private readonly turn = (): void => {
    if (this.waits === 0 || performance.now() > this.deadline) {
      this.spinning = false;
      return;
    }
    this.turns++;
    setImmediate(this.turn);
  };
}
