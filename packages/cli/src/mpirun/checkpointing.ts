import type { SsiContext } from '@ssi/core';
import { Framework } from '@ssi/core';
import {
  type CrlamActions,
  type CrlamModule,
  type HubControl,
  JobCheckpoints,
  type JobRecord,
  registerMpiParams,
} from '@ssi/mpi';
import type { CheckpointOutcome } from './checkpoint-protocol';
import { CheckpointRequestServer } from './checkpoint-requests';
import { drainJob } from './drain';
import type { EndJob } from './job';

/** A series this mpirun committed: where, and when (mpirun's clock, `Date.now()`). */
export interface CommittedSeries {
  series: number;
  /** The job's checkpoint directory (the store's root, holding series-<n>/). */
  dir: string;
  at: number;
}

/** mpirun's checkpoint/restart part of one job: the crlam module, the protocol, the listener. */
export interface JobCheckpointing {
  /** The selected cr module. */
  module: string;
  /** The latest series this job committed, or null before the first. */
  latest(): CommittedSeries | null;
  /** Resolves true once every rank finished MPI.init, false when the job ends first. */
  everyRankReady(): Promise<boolean>;
  /**
   * Hooks the job's control channel (synchronously: before any rank can speak); `end` ends the
   * job (a drain notice does, after its checkpoint).
   */
  attach(control: HubControl, size: number, end: EndJob): void;
  /**
   * A drain notice (`cause`: 'SIGTERM', 'lamcheckpoint --preempt'): see `drainJob`. False when one
   * is already under way or the job is not attached (the caller then stops the job at once).
   */
  drain(cause: string, progress?: (text: string) => void): boolean;
  /** What stands for `rank` in a restart from `seriesDir` (the module's restore), or null. */
  restartArgv(seriesDir: string, rank: number): Promise<string[] | null>;
  /** The job is being ended (a rank died): a checkpoint in progress is given up, saying why. */
  ending(why: string): void;
  /** The job is over: whatever waits is answered, the listener closes. */
  close(why: string): Promise<void>;
}

/**
 * Sets up checkpointing when the user selected a cr module (`--ssi cr self`): opens the crlam
 * half of that name, which decides where series go, and listens for `lamcheckpoint`. Returns
 * null when no cr module is asked for (the job is then not checkpointable and says so).
 */
export async function setUpCheckpointing(
  ctx: SsiContext,
  jobId: string,
  job: JobRecord,
  say: (line: string) => void,
): Promise<JobCheckpointing | null> {
  const raw = ctx.params.rawSetting('cr')?.raw;
  if (typeof raw !== 'string' || raw.trim() === '' || raw.trim().startsWith('^')) return null;
  registerMpiParams(ctx.params);
  const fw = new Framework<CrlamModule>('crlam', {
    params: ctx.params,
    discovery: ctx.discovery,
    write: (line) => say(`mpirun: ${line}`),
  });
  await fw.open();
  const selection = await fw.select(async (m) =>
    typeof m.query === 'function' && typeof m.init === 'function'
      ? m.query({ params: ctx.params })
      : 'it is not a crlam module of this API (no query/init function)',
  );
  await fw.closeAllBut([selection.name]);
  const module: CrlamActions = await selection.module.init({
    params: ctx.params,
    jobId,
    job,
    verbose: (level, message) => fw.verbose.log(level, message),
  });
  let latest: CommittedSeries | null = null;
  // Every commit is noted (automatic recovery restarts from the latest one's directory); every
  // other member of the module's actions passes through unchanged.
  const actions: CrlamActions = {
    interval: module.interval,
    continueBeforeCommit: module.continueBeforeCommit,
    beginSeries: () => module.beginSeries(),
    abandonSeries: (plan, reason) => module.abandonSeries(plan, reason),
    finalize: module.finalize ? () => module.finalize!() : undefined,
    restartArgv: module.restartArgv ? (d, r) => module.restartArgv!(d, r) : undefined,
    async commitSeries(plan, ranks) {
      const result = await module.commitSeries(plan, ranks);
      latest = { series: result.series, dir: result.dir, at: Date.now() };
      return result;
    },
  };
  let checkpoints: JobCheckpoints | null = null;
  let server: Promise<CheckpointRequestServer | null> = Promise.resolve(null);
  let endJob: EndJob | null = null;
  let hub: HubControl | null = null;
  let draining: Promise<CheckpointOutcome> | null = null;
  const startDrain = (cause: string, progress: (text: string) => void) => {
    draining ??= drainJob(cause, {
      control: hub!,
      checkpoints: checkpoints!,
      end: endJob!,
      say,
      progress,
    });
    return draining;
  };
  return {
    module: selection.name,
    latest: () => latest,
    everyRankReady: async () => (checkpoints ? checkpoints.everyRankReady() : false),
    restartArgv: async (seriesDir, rank) => (await actions.restartArgv?.(seriesDir, rank)) ?? null,
    drain(cause, progress = () => {}) {
      if (draining || !checkpoints || !endJob) return false;
      void startDrain(cause, progress);
      return true;
    },
    attach(control, size, end) {
      endJob = end;
      hub = control;
      const jc = new JobCheckpoints(control, size, actions, {
        module: selection.name,
        prepareTimeoutMs: ctx.params.get<number>('crlam_base_prepare_timeout'),
        prepareAttempts: ctx.params.get<number>('crlam_base_prepare_attempts'),
        say,
      });
      checkpoints = jc;
      server = CheckpointRequestServer.start({
        pid: process.pid,
        jobId,
        handler: (progress, op) =>
          op === 'preempt' ? startDrain('lamcheckpoint --preempt', progress) : jc.request(progress),
      }).catch((err: Error) => {
        say(`mpirun: warning: lamcheckpoint cannot reach this job: ${err.message}`);
        return null;
      });
    },
    ending(why) {
      checkpoints?.jobEnded(why);
    },
    async close(why) {
      checkpoints?.jobEnded(why);
      // A checkpoint in progress answers its askers with its own outcome (the series it gave
      // up and why) before the listener's generic "mpirun is ending".
      await checkpoints?.settled();
      await (await server)?.close();
      await actions.finalize?.();
      await fw.close();
    },
  };
}
