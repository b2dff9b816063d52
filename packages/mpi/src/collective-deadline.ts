/**
 * `coll_base_timeout` for the collective operations of one communicator, which run one at a time
 * (their `CollectiveSequence`): one timer per communicator, re-armed only when it fires, instead
 * of a timer per call. A setTimeout and clearTimeout pair costs 0.3-0.8 µs here, a good part of
 * what the MPI layer adds to a small collective.
 */
const same = (err: unknown): unknown => err;

export class CollectiveDeadline {
  private watched: { deadline: number; expire: () => void } | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** When the pending timer fires (Date.now() time). */
  private timerAt = 0;

  /**
   * Settles as `work` does, or rejects with `expired()` once `ms` have passed; `raise` (default:
   * none) maps either rejection's reason first, so a caller that reports errors through a
   * handler needs no second promise for it.
   */
  bound<T>(
    work: Promise<T>,
    ms: number,
    expired: () => Error,
    raise: (err: unknown) => unknown = same,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // Once expired, the caller has its timeout: a later failure of the work (a level of a
      // hierarchical module timing out in turn) is not raised again, when the caller may have
      // moved on (and put back ERRORS_ARE_FATAL, say).
      let timedOut = false;
      const entry = {
        deadline: Date.now() + ms,
        expire: () => {
          timedOut = true;
          reject(raise(expired()));
        },
      };
      this.watch(entry);
      work.then(
        (value) => {
          this.unwatch(entry);
          resolve(value);
        },
        (err) => {
          this.unwatch(entry);
          if (!timedOut) reject(raise(err));
        },
      );
    });
  }

  private watch(entry: { deadline: number; expire: () => void }): void {
    this.watched = entry;
    // A pending timer that fires before this deadline re-arms for it then; a later one (the
    // parameter was lowered since) is replaced.
    if (!this.timer || this.timerAt > entry.deadline) this.arm(entry.deadline);
  }

  private unwatch(entry: object): void {
    if (this.watched !== entry) return;
    this.watched = undefined;
  }

  private arm(at: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    // Unreferenced: it stays for the next call and must not keep a finished process alive. A
    // rank waiting in a collective is kept alive by its connections (to mpirun, to its peers).
    this.timer = setTimeout(this.fire, Math.max(0, at - Date.now()));
    this.timer.unref();
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    const entry = this.watched;
    if (!entry) return;
    if (entry.deadline > Date.now()) {
      this.arm(entry.deadline);
      return;
    }
    this.watched = undefined;
    entry.expire();
  };
}
