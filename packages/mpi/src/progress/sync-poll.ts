import type { RpiActions } from '../rpi/types';

/**
 * A waiting call holds the event loop at most this long at a time while the module keeps
 * making progress on other requests (a stream of messages for someone else): then it returns
 * to the event loop, so the process's timers and sockets run (issue 15).
 */
const SPIN_CAP_MS = 1;

/**
 * Synchronous progress for `polling` rpi modules (shared memory, issue 15). A waiting MPI call
 * first spins in the module's `advance(true)` — each call bounded by the module (its spin
 * parameter) — until what it waits for is done, so a message that comes within the spin
 * completes the call without a turn of the event loop; `test` and `iprobe` poll once with
 * `advance(false)`. The call returns to the event loop when the spin found nothing, or after
 * `SPIN_CAP_MS` of continuous progress on other requests. A polling module completes requests
 * synchronously inside `advance` (a completion deferred to a promise callback is seen only
 * after the spin).
 *
 * Modules that are not `polling` are never spun: every method then leaves the call to wait for
 * events as before.
 */
export class SyncPoll {
  constructor(private readonly actions: () => RpiActions) {}

  /** Whether the module is polled synchronously. */
  get enabled(): boolean {
    return this.actions().polling === true;
  }

  /** Polls once without waiting (`test`, `iprobe`); true when any request changed state. */
  pollNow(): boolean {
    const a = this.actions();
    return a.polling === true && a.advance(false) === true;
  }

  /**
   * Spins until `done()`: true when it is, false when the module's spin found nothing or the cap
   * passed (the caller then waits for an event).
   */
  spinUntil(done: () => boolean): boolean {
    const a = this.actions();
    if (a.polling !== true) return done();
    const deadline = performance.now() + SPIN_CAP_MS;
    for (;;) {
      if (done()) return true;
      if (a.advance(true) !== true || performance.now() > deadline) return done();
    }
  }

  /** Whether the MPI layer keeps polling while requests are active (`pollWait` 'spin'). */
  get keepsPolling(): boolean {
    const a = this.actions();
    return a.polling === true && (a.pollWait ?? 'spin') === 'spin';
  }
}
