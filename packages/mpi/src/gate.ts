/**
 * The MPI entry gate (DESIGN.md §6, Ch. 7.2.2's library lock): while a checkpoint is in
 * progress every MPI entry point waits at the gate, and when the gate opens again the waiting
 * operations proceed in the order they were called, before anything called later. Nothing is
 * lost or reordered.
 *
 * Entry points check `open` (one property read on the hot path). When closed they `defer` the
 * rest of the call; `reopen` runs the deferred calls synchronously, in order.
 */
export class EntryGate {
  open = true;
  private deferred: (() => void)[] = [];

  close(): void {
    this.open = false;
  }

  /** Runs `fn` when the gate opens (now, if it is open). */
  defer(fn: () => void): void {
    if (this.open) fn();
    else this.deferred.push(fn);
  }

  /** Defers a call that returns a promise; the result settles as the deferred call's does. */
  deferPromise<T>(fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.defer(() => {
        try {
          fn().then(resolve, reject);
        } catch (err) {
          reject(err);
        }
      });
    });
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
