import { readFileSync } from 'node:fs';

/**
 * How long this process's main thread waited for a CPU per unit of time it ran, from Linux's
 * per-task scheduler statistics (`/proc/self/schedstat`: ns run, ns runnable but waiting, time
 * slices). It answers "are the cores this rank runs on busy with someone else now?" directly:
 * 0 when the rank gets a core whenever it wants one, about 1 when it shares its core with one
 * other busy process, more on a crowded machine. Unlike the load average it does not lag, and
 * it does not count the job's own ranks while they have cores to themselves, nor programs
 * running at a lower priority (a `nice`d build barely delays a rank).
 */
export class RunDelay {
  private last: readonly [run: number, wait: number] | null;
  private latest: number | null = null;

  constructor(
    /** Reads [ns run, ns waited]; null where the system does not tell (not Linux). */
    private readonly read: () => readonly [number, number] | null = readSchedstat,
    /** Run time (ns) an interval needs before its ratio counts: a rank that ran for a few
     * microseconds since the last look says little about the cores. */
    private readonly minRunNs = MIN_RUN_NS,
  ) {
    this.last = read();
    // Since the process started: start-up itself ran for a hundred milliseconds or more.
    if (this.last !== null && this.last[0] > 0) this.latest = this.last[1] / this.last[0];
  }

  /**
   * The ratio over the time since the last interval that ran long enough (the previous value
   * while this one has not yet); null where it cannot be known.
   */
  sample(): number | null {
    if (this.last === null) return null;
    const now = this.read();
    if (now === null) return this.latest;
    const ran = now[0] - this.last[0];
    if (ran < this.minRunNs) return this.latest;
    this.latest = Math.max(0, now[1] - this.last[1]) / ran;
    this.last = now;
    return this.latest;
  }
}

/** 5 ms. */
const MIN_RUN_NS = 5_000_000;

/** `/proc/self/schedstat` of the main thread (the JS thread), or null where it is missing. */
export function readSchedstat(): readonly [number, number] | null {
  try {
    const [run, wait] = readFileSync('/proc/self/schedstat', 'latin1').split(' ').map(Number);
    return Number.isFinite(run) && Number.isFinite(wait) ? [run!, wait!] : null;
  } catch {
    return null;
  }
}
