import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';

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

  constructor(
    /** Length of the polling window after a wait begins, µs (0: never poll). */
    readonly budgetUs: number,
  ) {
    this.windowUs = budgetUs;
  }

  /**
   * An MPI call begins to wait: (re)open the polling window. Returns the time it began, to give
   * to `release`.
   */
  hold(): number {
    this.waits++;
    const now = performance.now();
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

/** What the job's placement says about polling on this node, and what was chosen. */
export interface PollChoice {
  budgetUs: number;
  /** Ranks of the job on this node. */
  nodeRanks: number;
  /** Cores this process may use (`os.availableParallelism()`). */
  cores: number;
  oversubscribed: boolean;
  /** The machine's 1-minute load average at the choice. */
  load: number;
  /** One line for verbose output: what polls and why. */
  reason: string;
}

/**
 * The polling window for this process: `requestedUs` (mpi_base_poll_us) unless the node is
 * oversubscribed — more of the job's ranks on it than cores, or a 1-minute load average of at
 * least its cores (other programs keep them busy) — where a rank that spins takes the core a
 * peer needs to answer it, and loses the scheduler's preference for a process that wakes up
 * (measured: an unpinned np 2 barrier on a busy 2-core machine 2-5x slower polling); then
 * `oversubscribedUs` (mpi_base_poll_oversubscribed_us, default 0: sleep at once), unless the
 * user set mpi_base_poll_us explicitly.
 */
export function choosePolling(
  requestedUs: number,
  explicit: boolean,
  oversubscribedUs: number,
  nodeRanks: number,
  cores: number = availableParallelism(),
  load: number = loadavg()[0]!,
): PollChoice {
  const crowded = nodeRanks > cores;
  const busy = load >= cores;
  const oversubscribed = crowded || busy;
  let budgetUs = Math.max(0, requestedUs);
  let why = `mpi_base_poll_us ${budgetUs}`;
  if (oversubscribed && !explicit) {
    budgetUs = Math.max(0, oversubscribedUs);
    const what = crowded
      ? `${nodeRanks} ranks on ${cores} cores`
      : `load ${load.toFixed(1)} on ${cores} cores`;
    why = `oversubscribed (${what}): mpi_base_poll_oversubscribed_us ${budgetUs}`;
  }
  const what =
    budgetUs > 0 ? `polls ${budgetUs} µs per wait, then sleeps` : 'never polls (sleeps at once)';
  return {
    budgetUs,
    nodeRanks,
    cores,
    oversubscribed,
    load,
    reason: `progress: ${what}; ${why}; ${nodeRanks} rank(s) on this node, ${cores} core(s)`,
  };
}
