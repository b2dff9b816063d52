/**
 * The promise an entry point returns when its call finished before returning (a send the rpi
 * took at once, a send to `PROC_NULL`): already settled, so the gate counts the call as returned
 * at once instead of waiting for a reaction (a checkpointable job pays nothing extra for it).
 */
export const COMPLETED: Promise<void> = Promise.resolve();

/**
 * The MPI entry gate (DESIGN.md §6, Ch. 7.2.2's library lock), the one place every MPI call
 * enters the library: while a checkpoint is in progress every entry point waits at the gate, and
 * when the gate opens again the waiting operations proceed in the order they were called, before
 * anything called later. Nothing is lost or reordered.
 *
 * Entry points use one of three shapes, so that no call site open-codes the check:
 * - `call(fn)`: an asynchronous call (blocking send/receive, collectives, probe, finalize) runs
 *   now, or when the gate opens; the caller's promise settles as `fn`'s does.
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

  close(): void {
    this.open = false;
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
    if ((p as Promise<unknown>) === COMPLETED) {
      calls.callReturned();
      return p;
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
