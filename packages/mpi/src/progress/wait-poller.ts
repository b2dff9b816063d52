import { performance } from 'node:perf_hooks';

/** How often (ms) the poller asks whether the machine still allows polling. */
export const RECHECK_MS = 250;

/**
 * The slowest transfer rate a waiting call's own message is assumed to move at, bytes per µs
 * (1 GB/s; loopback TCP and Unix sockets here move 2-7). A call that moves a long message is
 * busy for that long on top of the window: its polling lasts that much longer, and a wait that
 * took no longer than window + transfer time counts as short (see `hold`, `extend`, `release`).
 */
export const TRANSFER_BYTES_PER_US = 1000;

/**
 * The transfer time of `bytes`, µs. A multiplication by a fraction, not `bytes / 1000`: V8 then
 * compiles it for doubles from the first call, where a division first seen with 0 bytes only
 * (a barrier's messages) is compiled for small integers and deoptimizes ("lost precision") at the
 * first wait that moves a byte, e.g. a gather after a loop of barriers: the code of every wait
 * then ran unoptimized until V8 compiled it again (a 2-rank barrier measured 15 µs instead of 7).
 */
const US_PER_BYTE = 1 / TRANSFER_BYTES_PER_US;
const transferUs = (bytes: number): number => bytes * US_PER_BYTE;

/** The polling turns read the clock every 4th turn (`CLOCK_MASK + 1`). */
const CLOCK_MASK = 3;

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
 * Long messages: a wait that moves one lasts the message's transfer time however fast the peer
 * answers. Its polling covers that time too (the bytes of a send at `hold`; of a receive when
 * its message starts arriving, `extend`), and the transfer time is not held against the window
 * at `release`. Without this, every wait for a long message halved the window and the receiver
 * slept between the chunks of each body (a 1 MiB tcp ping-pong: 248 µs one-way, 182 µs with it).
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
  /** Of those, the turns that gave the CPU away first (`giveWay`; for tests). */
  givenAway = 0;
  /** The current window, µs: between `budgetUs / 16` and `budgetUs` (see the class comment). */
  windowUs: number;

  /** Length of the polling window after a wait begins, µs (0: never poll). */
  budgetUs: number;
  /**
   * Called at every polling turn when ranks share this CPU (sched_yield: the others run now, see
   * `choosePolling`); null: the turns keep the CPU.
   */
  giveWay: (() => void) | null = null;
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
   * An MPI call begins to wait: (re)open the polling window, lengthened by the transfer time of
   * `bytes` (a long send it waits to flush). Returns the time it began, to give to `release`.
   */
  hold(bytes = 0): number {
    this.waits++;
    const now = performance.now();
    if (this.recheck !== null && now >= this.nextCheck) this.check(now);
    if (this.budgetUs <= 0) return now;
    this.deadline = now + (this.windowUs + transferUs(bytes)) * 0.001;
    this.spin();
    return now;
  }

  /**
   * A message of `bytes` starts arriving for a call that waits: keep polling for its transfer
   * time (and the window after it), if that is longer than the current window.
   */
  extend(bytes: number): void {
    if (this.waits === 0 || this.budgetUs <= 0) return;
    const until = performance.now() + (this.windowUs + transferUs(bytes)) * 0.001;
    if (until <= this.deadline) return;
    this.deadline = until;
    this.spin();
  }

  private spin(): void {
    if (this.spinning) return;
    this.spinning = true;
    setImmediate(this.turn);
  }

  /**
   * The call's wait that began at `since` is over (completed, or its waiter unregistered);
   * `bytes`: the message it moved (its transfer time does not count against the window).
   */
  release(since: number, bytes = 0): void {
    if (this.waits > 0) this.waits--;
    if (this.budgetUs <= 0) return;
    const tookUs = (performance.now() - since) * 1000 - transferUs(bytes);
    this.windowUs =
      tookUs <= this.budgetUs
        ? Math.min(this.budgetUs, this.windowUs * 2)
        : Math.max(this.budgetUs * 0.0625, this.windowUs * 0.5);
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

  /**
   * One turn: another while a call waits and the window lasts (after giving the CPU away, where
   * `giveWay` says so). The clock is read every fourth turn only (a turn takes a microsecond or
   * two, reading the clock is a call into Node, and a ping-pong's wait has several turns), so a
   * window may run up to three turns long.
   */
  private readonly turn = (): void => {
    if (
      this.waits === 0 ||
      ((++this.turns & CLOCK_MASK) === 0 && performance.now() > this.deadline)
    ) {
      this.spinning = false;
      return;
    }
    if (this.giveWay !== null) {
      this.givenAway++;
      this.giveWay();
    }
    setImmediate(this.turn);
  };
}
