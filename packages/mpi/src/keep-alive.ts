/**
 * Keeps Node's event loop alive while MPI waits for something, and only then. The sockets of
 * the MPI layer, its runtime and its rpi modules are unref'd, so a program whose main returns
 * without MPI.finalize ends (and is told so) instead of hanging on open connections; while a
 * request is active, a blocking probe waits or MPI.init / MPI.finalize run, one ref'd timer holds
 * the process. One per process: the runtime and the engine share it.
 */
class KeepAlive {
  private holds = 0;
  private timer: NodeJS.Timeout | null = null;

  hold(): void {
    if (this.holds++ > 0) return;
    this.timer ??= setInterval(() => {}, 2 ** 30);
    this.timer.ref();
  }

  release(): void {
    if (this.holds === 0) return;
    if (--this.holds === 0) this.timer?.unref();
  }

  /** MPI is finalized: requests left active (a timed-out collective's) hold nothing any more. */
  stop(): void {
    this.holds = 0;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

export const keepAlive = new KeepAlive();
