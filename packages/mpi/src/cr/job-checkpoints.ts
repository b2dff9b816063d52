import type { HubControl } from '../control/hub-control';
import { type CrlamActions, CrMessage, type SavedRank, type SeriesPlan } from './types';
import type { CheckpointOutcome, CheckpointPhases } from './user-api';

/** Reports the steps of one checkpoint to whoever asked (lamcheckpoint prints them). */
export type Progress = (text: string) => void;

interface Ready {
  module?: string;
  checkpointable: boolean;
  reason?: string;
}

interface Saved {
  series: number;
  saved?: SavedRank;
  error?: string;
  drainMs: number;
  saveMs: number;
  /** The rank's crmpi module says it was restored from its image (reconnect, do not continue). */
  restored?: boolean;
}

/** Waits for one message of a type from every rank, or gives up at a deadline. */
class Collect<T> {
  readonly got = new Map<number, T>();
  private done: (() => void) | null = null;
  constructor(private readonly size: number) {}
  add(rank: number, value: T): void {
    this.got.set(rank, value);
    if (this.got.size === this.size) this.done?.();
  }
  wait(ms: number): Promise<boolean> {
    if (this.got.size === this.size) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = ms > 0 ? setTimeout(() => resolve(false), ms) : undefined;
      this.done = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
  }
  missing(): number[] {
    return Array.from({ length: this.size }, (_, r) => r).filter((r) => !this.got.has(r));
  }
  abort(): void {
    this.done?.();
  }
}

/**
 * mpirun's side of the cr base (the crlam framework's base, Ch. 7.1 and the mpirun plan `003_…`):
 * the window in which the job is checkpointable (every rank initialized … the first rank started
 * finalize), requests from `lamcheckpoint`, the application and the interval timer (held until
 * the window opens, joined when one is already running, refused with a reason otherwise), and the
 * protocol of one series: prepare (every rank interrupts, retried when a rank is busy) → go (drain
 * and save) → the crlam module commits → done.
 */
export class JobCheckpoints {
  private readonly ready = new Map<number, Ready>();
  private finalizing: number | null = null;
  private ended: string | null = null;
  private current: Promise<CheckpointOutcome> | null = null;
  private currentProgress: Progress[] = [];
  private windowWaiters: (() => void)[] = [];
  private prepared: Collect<string | undefined> | null = null;
  private saved: Collect<Saved> | null = null;
  private attempt = 0;
  /** A drain asked for the job's last series: every series started from now on stops the ranks. */
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  /** `mpi.cr.checkpoint()` is collective: calls made so far per rank, and the k-th call's outcome. */
  private readonly appCalls = new Map<number, number>();
  private readonly appOutcomes = new Map<
    number,
    { outcome: Promise<CheckpointOutcome>; left: number }
  >();

  constructor(
    private readonly control: HubControl,
    private readonly size: number,
    private readonly crlam: CrlamActions,
    private readonly opts: {
      /** The crlam module's name: the ranks' crmpi module must be the other half of it. */
      module: string;
      prepareTimeoutMs: number;
      prepareAttempts: number;
      say(line: string): void;
    },
  ) {
    control.on(CrMessage.READY, (rank, p) => this.onReady(rank, p as Ready));
    control.on(CrMessage.FINALIZING, (rank) => this.onFinalizing(rank));
    control.on(CrMessage.PREPARED, (rank, p) => {
      const { attempt, refused } = p as { attempt: number; refused?: string };
      if (attempt === this.attempt) this.prepared?.add(rank, refused);
    });
    control.on(CrMessage.SAVED, (rank, p) => this.saved?.add(rank, p as Saved));
    control.on(CrMessage.REQUEST, (rank) => this.collectiveRequest(rank));
    if (crlam.interval > 0) {
      this.timer = setInterval(() => void this.periodic(), crlam.interval * 1000);
      this.timer.unref();
    }
  }

  /**
   * Asks for a checkpoint; resolves with the series written or the reason there is none. A
   * request joins the checkpoint under way, unless `fresh`: then it waits for that one to end and
   * takes (or joins) one whose prepare is sent after this call, so that whatever the caller told
   * the ranks before (a drain notice) is seen by every rank before that series is saved. `stop`:
   * the series ends the job (a drain), so the ranks are not continued after it: they stay frozen,
   * their state the one saved, until the job ends or (a process image) a new job adopts them.
   */
  async request(
    progress: Progress,
    opts: { fresh?: boolean; stop?: boolean } = {},
  ): Promise<CheckpointOutcome> {
    if (opts.fresh && this.current) {
      progress('a checkpoint of this job is under way: the drain takes a new one after it');
      await this.current.catch(() => undefined);
    }
    if (opts.stop) this.stopping = true;
    return this.join(progress);
  }

  private join(progress: Progress): Promise<CheckpointOutcome> {
    if (this.current) {
      progress('a checkpoint of this job is already in progress: this request joins it');
      this.currentProgress.push(progress);
      return this.current;
    }
    this.currentProgress = [progress];
    const say = (text: string) => {
      for (const p of this.currentProgress) p(text);
    };
    this.current = this.run(say).finally(() => {
      this.current = null;
    });
    return this.current;
  }

  /**
   * A rank's k-th `mpi.cr.checkpoint()`: the first rank to make its k-th call starts (or joins)
   * a checkpoint; every rank's k-th call answers with that one outcome, however late it comes
   * (a rank that calls after the series was taken is not the cause of a second one).
   */
  private collectiveRequest(rank: number): Promise<CheckpointOutcome> {
    const k = (this.appCalls.get(rank) ?? 0) + 1;
    this.appCalls.set(rank, k);
    let call = this.appOutcomes.get(k);
    if (!call) {
      call = { outcome: this.join(() => {}), left: this.size };
      this.appOutcomes.set(k, call);
    }
    if (--call.left === 0) this.appOutcomes.delete(k);
    return call.outcome;
  }

  /** The job is over (or lost a rank): whatever waits is answered. The first reason stays. */
  jobEnded(why: string): void {
    this.ended ??= why;
    clearInterval(this.timer);
    for (const w of this.windowWaiters.splice(0)) w();
    this.prepared?.abort();
    this.saved?.abort();
  }

  /** Resolves true once every rank finished `MPI.init` (cr.ready), false if the job ends first. */
  async everyRankReady(): Promise<boolean> {
    while (this.ready.size < this.size && !this.ended) {
      await new Promise<void>((resolve) => this.windowWaiters.push(resolve));
    }
    return this.ready.size === this.size;
  }

  /** Resolves once no checkpoint is in progress (after `jobEnded`, promptly). */
  async settled(): Promise<void> {
    await this.current?.catch(() => undefined);
  }

  private async periodic(): Promise<void> {
    const outcome = await this.join(() => {});
    if (outcome.ok) {
      this.opts.say(
        `mpirun: checkpoint series ${outcome.series} (${outcome.bytes} bytes, ${outcome.ms.toFixed(0)} ms)`,
      );
    } else if (!this.ended && this.finalizing === null) {
      this.opts.say(`mpirun: periodic checkpoint not taken: ${outcome.reason}`);
    }
  }

  private onReady(rank: number, r: Ready): void {
    if (r.module !== this.opts.module) {
      r = {
        checkpointable: false,
        reason: `it selected the crmpi module "${r.module}" but mpirun has the crlam module "${this.opts.module}": the two halves of one cr component must be used together`,
      };
    }
    this.ready.set(rank, r);
    if (this.ready.size === this.size) for (const w of this.windowWaiters.splice(0)) w();
  }

  private onFinalizing(rank: number): void {
    if (this.finalizing === null) this.finalizing = rank;
    for (const w of this.windowWaiters.splice(0)) w();
    clearInterval(this.timer);
  }

  /** Why no checkpoint can start now and never will, or null when the window is open. */
  private closed(): string | null {
    if (this.ended) return `the job ended: ${this.ended}`;
    if (this.finalizing !== null) {
      return `the job is finishing (rank ${this.finalizing} started MPI.finalize): no checkpoint can be taken any more`;
    }
    return null;
  }

  private async openWindow(say: Progress): Promise<string | null> {
    while (this.ready.size < this.size && !this.closed()) {
      say(`waiting for every rank to finish MPI.init (${this.ready.size} of ${this.size} ready)`);
      await new Promise<void>((resolve) => this.windowWaiters.push(resolve));
    }
    const closed = this.closed();
    if (closed) return closed;
    for (const [rank, r] of [...this.ready].sort((a, b) => a[0] - b[0])) {
      if (!r.checkpointable) return `rank ${rank}: ${r.reason ?? 'cannot checkpoint'}`;
    }
    return null;
  }

  private async run(say: Progress): Promise<CheckpointOutcome> {
    const refused = await this.openWindow(say);
    if (refused) return { ok: false, reason: refused };
    // Fixed when the series starts: a series under way when a drain came continues its ranks.
    const stop = this.stopping || undefined;
    const t0 = performance.now();
    const plan = await this.crlam.beginSeries();
    const interrupted = await this.interruptAll(plan, say);
    if (interrupted !== null) {
      await this.crlam.abandonSeries(plan, interrupted);
      return { ok: false, reason: interrupted };
    }
    const prepared = performance.now();
    say(`every rank interrupted; draining and saving series ${plan.series}`);
    const saved = new Collect<Saved>(this.size);
    this.saved = saved;
    this.control.send('all', CrMessage.GO, { ...plan, attempt: this.attempt });
    await saved.wait(0);
    const savedAt = performance.now();
    this.saved = null;
    const failure = this.ended
      ? `the job ended during the checkpoint: ${this.ended}`
      : failureOf(saved);
    if (failure) {
      await this.crlam.abandonSeries(plan, failure);
      if (!this.ended)
        this.control.send('all', CrMessage.DONE, { series: plan.series, committed: false });
      return {
        ok: false,
        reason: `series ${plan.series} is incomplete and will not be used: ${failure}`,
      };
    }
    const ranks = [...saved.got.values()].map((s) => s.saved!).sort((a, b) => a.rank - b.rank);
    const restore = [...saved.got.values()].some((s) => s.restored === true);
    if (restore) say('a rank was restored from its image: every rank re-creates its connections');
    const committed = { series: plan.series, committed: true, restore, stop };
    // A plan whose redundancy is made after the ranks go on commits once it is durable.
    const early = this.crlam.continueBeforeCommit === true;
    if (early) this.control.send('all', CrMessage.DONE, committed);
    let result: Awaited<ReturnType<CrlamActions['commitSeries']>>;
    try {
      result = await this.crlam.commitSeries(plan, ranks);
    } catch (err) {
      // The series cannot be made complete (a plan's redundancy is missing): the ranks go on.
      const reason = `series ${plan.series} is incomplete and will not be used: ${(err as Error).message}`;
      await this.crlam.abandonSeries(plan, reason);
      if (!early && !this.ended) {
        this.control.send('all', CrMessage.DONE, { series: plan.series, committed: false });
      }
      return { ok: false, reason };
    }
    if (!early) this.control.send('all', CrMessage.DONE, committed);
    const done = performance.now();
    const phases = phasesOf([...saved.got.values()], { t0, prepared, savedAt, done });
    if (result.pruned.length) say(`removed old series ${result.pruned.join(', ')} (keep rule)`);
    return {
      ok: true,
      series: result.series,
      ms: done - t0,
      bytes: result.bytes,
      dir: result.dir,
      phases,
    };
  }

  /** Prepare until every rank interrupted; a busy rank makes everyone back off and retry. */
  private async interruptAll(plan: SeriesPlan, say: Progress): Promise<string | null> {
    for (let attempt = 1; attempt <= this.opts.prepareAttempts; attempt++) {
      const prepared = new Collect<string | undefined>(this.size);
      this.prepared = prepared;
      this.attempt++;
      this.control.send('all', CrMessage.PREPARE, { ...plan, attempt: this.attempt });
      const all = await prepared.wait(this.opts.prepareTimeoutMs);
      this.prepared = null;
      const closed = this.closed();
      const refusal = [...prepared.got].find(([, why]) => why !== undefined);
      if (all && !refusal && !closed) return null;
      this.control.send('all', CrMessage.RETREAT, { attempt: this.attempt });
      if (closed) return closed;
      if (refusal) return `rank ${refusal[0]}: ${refusal[1]}`;
      say(
        `rank(s) ${prepared.missing().join(', ')} did not interrupt within ${this.opts.prepareTimeoutMs} ms ` +
          `(computing outside MPI without mpi.cr.safePoint(), or in a critical section); attempt ${attempt} of ${this.opts.prepareAttempts}`,
      );
    }
    return `not every rank could be interrupted in ${this.opts.prepareAttempts} attempts (see crlam_base_prepare_timeout)`;
  }
}

function failureOf(saved: Collect<Saved>): string | null {
  const missing = saved.missing();
  if (missing.length) return `rank(s) ${missing.join(', ')} did not save`;
  for (const [rank, s] of saved.got) {
    if (s.error || !s.saved) return s.error ?? `rank ${rank} saved nothing`;
  }
  return null;
}

/**
 * The phases of one series from mpirun's marks (`performance.now()` at the start, every rank
 * interrupted, every rank saved, committed) and the ranks' own drain and save times (SAVED).
 */
function phasesOf(
  ranks: readonly Saved[],
  t: { t0: number; prepared: number; savedAt: number; done: number },
): CheckpointPhases {
  const max = (f: (s: Saved) => number) => Math.max(0, ...ranks.map(f));
  return {
    prepareMs: t.prepared - t.t0,
    savedMs: t.savedAt - t.prepared,
    drainMs: max((s) => s.drainMs),
    saveMs: max((s) => s.saveMs),
    drainSaveMs: max((s) => s.drainMs + s.saveMs),
    commitMs: t.done - t.savedAt,
  };
}
