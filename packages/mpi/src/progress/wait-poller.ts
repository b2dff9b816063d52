import { availableParallelism } from 'node:os';
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
 */
export class WaitPoller {
  /** MPI calls waiting now. */
  private waits = 0;
  private spinning = false;
  /** `performance.now()` (ms) after which the current window is over. */
  private deadline = 0;
  /** Turns of the event loop made by the poller (for tests and verbose output). */
  turns = 0;

  constructor(
    /** Length of the polling window after a wait begins, µs (0: never poll). */
    readonly budgetUs: number,
  ) {}

  /** An MPI call begins to wait: (re)open the polling window. Pair with `release`. */
  hold(): void {
    this.waits++;
    if (this.budgetUs <= 0) return;
    this.deadline = performance.now() + this.budgetUs / 1000;
    if (!this.spinning) {
      this.spinning = true;
      setImmediate(this.turn);
    }
  }

  /** The call's wait is over (completed, or its waiter unregistered). */
  release(): void {
    if (this.waits > 0) this.waits--;
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
  /** One line for verbose output: what polls and why. */
  reason: string;
}

/**
 * The polling window for this process: `requestedUs` (mpi_base_poll_us) unless the node is
 * oversubscribed (more of the job's ranks on it than cores), where a rank that spins takes the
 * core a peer needs to answer it; then `oversubscribedUs` (mpi_base_poll_oversubscribed_us,
 * default 0: sleep at once), unless the user set mpi_base_poll_us explicitly.
 */
export function choosePolling(
  requestedUs: number,
  explicit: boolean,
  oversubscribedUs: number,
  nodeRanks: number,
  cores: number = availableParallelism(),
): PollChoice {
  const oversubscribed = nodeRanks > cores;
  let budgetUs = Math.max(0, requestedUs);
  let why = `mpi_base_poll_us ${budgetUs}`;
  if (oversubscribed && !explicit) {
    budgetUs = Math.max(0, oversubscribedUs);
    why = `oversubscribed (${nodeRanks} ranks on ${cores} cores): mpi_base_poll_oversubscribed_us ${budgetUs}`;
  }
  const what =
    budgetUs > 0 ? `polls ${budgetUs} µs per wait, then sleeps` : 'never polls (sleeps at once)';
  return {
    budgetUs,
    nodeRanks,
    cores,
    oversubscribed,
    reason: `progress: ${what}; ${why}; ${nodeRanks} rank(s) on this node, ${cores} core(s)`,
  };
}
