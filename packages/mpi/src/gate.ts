/** What `callReporting` hands a call when nothing counts calls (no cr module). */
const NOTHING = (): void => {};

/** `callReporting`'s `returned` for a call that runs uncounted (`EntryGate.free`). */
export const UNCOUNTED: () => void = NOTHING;

/**
 * The MPI entry gate (DESIGN.md §6, Ch. 7.2.2's library lock), the one place every MPI call
 * enters the library: while a checkpoint is in progress every entry point waits at the gate, and
 * when the gate opens again the waiting operations proceed in the order they were called, before
 * anything called later. Nothing is lost or reordered.
 *
 * Entry points use one of four shapes, so that no call site open-codes the check:
 * - `call(fn)`: an asynchronous call (collectives, probe, finalize) runs now, or when the gate
 *   opens; the caller's promise settles as `fn`'s does.
 * - `callReporting(fn)`: the same for a call that says itself when it returned (blocking
 *   send/receive: the hot path of a checkpointable job).
 * - `run(fn, held)`: a call that returns at once (starting a non-blocking request, cancel) runs
 *   now, or `held()` runs now and `fn` when the gate opens.
 * - `query(fn, held)`: a non-blocking question (`iprobe`) is answered now, or with `held` (the
 *   answer a call made during the checkpoint gets: nothing has arrived).
 *
 * Open, each costs one property read and a call: the hot path stays as it was.
 */
export class EntryGate {
  open = true;
  private deferred: (() => void)[] = [];
  /** Told when a call starts running and when it returns (the cr rollback log), if set. */
  calls: { callEntered(): void; callReturned(): void } | null = null;
  /** What `callReporting` hands its calls: one function for all of them (no closure per call). */
  private readonly returned = (): void => this.calls?.callReturned();

  close(): void {
    this.open = false;
  }

  /**
   * Whether a call may run now, uncounted (the gate is open and no cr module counts calls):
   * then `callReporting(fn)` is `fn(UNCOUNTED)`, which a hot caller may call itself instead of
   * making a closure per call.
   */
  get free(): boolean {
    return this.open && this.calls === null;
  }

  /** An asynchronous entry point: `fn` runs now, or when the gate opens. */
  call<T>(fn: () => Promise<T>): Promise<T> {
    if (this.open) return this.calls === null ? fn() : this.counted(fn);
    return new Promise<T>((resolve, reject) => {
      this.deferred.push(() => {
        try {
          (this.calls === null ? fn() : this.counted(fn)).then(resolve, reject);
        } catch (err) {
          reject(err);
        }
      });
    });
  }

  /**
   * An asynchronous entry point that reports its own return: `fn(returned)` calls `returned()`
   * exactly once, before it returns a settled promise or synchronously inside the reaction that
   * settles the promise it returned (so before the caller continues). The gate then needs no
   * reaction of its own to count the call: a checkpointable job's blocking send or receive costs
   * what it costs without a cr module (Table 7.4). A throw from `fn` counts as its return.
   */
  callReporting<T>(fn: (returned: () => void) => Promise<T>): Promise<T> {
    if (this.open) return this.calls === null ? fn(NOTHING) : this.countedReporting(fn);
    return new Promise<T>((resolve, reject) => {
      this.deferred.push(() => {
        try {
          (this.calls === null ? fn(NOTHING) : this.countedReporting(fn)).then(resolve, reject);
        } catch (err) {
          reject(err);
        }
      });
    });
  }

  private countedReporting<T>(fn: (returned: () => void) => Promise<T>): Promise<T> {
    this.calls!.callEntered();
    try {
      return fn(this.returned);
    } catch (err) {
      this.returned();
      throw err;
    }
  }

  /**
   * `fn` counted as a running call until its promise settles. The caller gets `fn`'s own promise
   * (no extra promise in its path: this costs one reaction per call, where `finally` cost three
   * hops); the count drops in a reaction registered before the caller's, so it has dropped by the
   * time the caller continues.
   */
  private counted<T>(fn: () => Promise<T>): Promise<T> {
    const calls = this.calls!;
    calls.callEntered();
    let p: Promise<T>;
    try {
      p = fn();
    } catch (err) {
      calls.callReturned();
      throw err;
    }
    const returned = () => calls.callReturned();
    p.then(returned, returned);
    return p;
  }

  /** An entry point that returns at once: `fn` runs now, or `held` now and `fn` at reopening. */
  run(fn: () => void, held?: () => void): void {
    if (this.open) fn();
    else {
      held?.();
      this.deferred.push(fn);
    }
  }

  /** A non-blocking query: `fn`'s answer now, or `held` while the gate is closed. */
  query<T>(fn: () => T, held: T): T {
    return this.open ? fn() : held;
  }

  reopen(): void {
    this.open = true;
    const calls = this.deferred;
    this.deferred = [];
    for (const fn of calls) fn();
  }

  /** Calls waiting at the gate. */
  get waiting(): number {
    return this.deferred.length;
  }
}
