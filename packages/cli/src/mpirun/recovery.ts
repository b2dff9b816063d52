import { dirname } from 'node:path';
import type { SsiContext } from '@ssi/core';
import {
  isLamError,
  type LamClient,
  parseNodeSpecWord,
  resolveNodeSpec,
  type UniverseNode,
} from '@ssi/lam';
import { CheckpointStore, CR_RESTART_ENV, type JobRecord, registerMpiParams } from '@ssi/mpi';
import { UsageError } from '../run-command';
import { type CommittedSeries, type JobCheckpointing, setUpCheckpointing } from './checkpointing';
import { type JobFailure, type JobOptions, runJob } from './job';
import type { Placement } from './placement';

/**
 * Automatic recovery (PSC's automated recovery after node failure, seed `004_…`): a
 * checkpointable job that loses a rank or a node is ended and started again by this mpirun from
 * its latest complete series, up to `crlam_base_recover` times, with PSC's lost-time accounting
 * (the work since that checkpoint, and the time the restart took).
 */
export interface RecoverableJob {
  ctx: SsiContext;
  client: LamClient;
  placements: readonly Placement[];
  /** The job id: its checkpoints' directory and `lamcheckpoint`'s alias for every run. */
  jobId: string;
  /** What the series manifests record of the job (its schema as the user gave it). */
  record: JobRecord;
  /** runJob's options for every run (the cr hooks, job id and restart are set here). */
  job: Omit<JobOptions, 'control' | 'onEnding' | 'jobId' | 'rankEnv'>;
  /** Environment every rank of every run gets (mpirun's forwarded settings). */
  rankEnv: Record<string, string>;
  /** `mpirun --cr-restart`: the first run restarts from this series. */
  restart?: { seriesDir: string; series: number; createdAt: string };
}

/** Signals a program sends itself by its own fault: restarting it would only fault again. */
const OWN_FAULT_SIGNALS = new Set(['SIGABRT', 'SIGSEGV', 'SIGBUS', 'SIGFPE', 'SIGILL', 'SIGSYS']);

/** How long a lamd has to answer before its node counts as lost at a recovery. */
const PING_TIMEOUT_MS = 5000;

/** Why this failure is not recovered (the job fails as before), or null when it is. */
export function whyNotRecovered(f: JobFailure): string | null {
  switch (f.kind) {
    case 'lost':
      return null;
    case 'killed':
      return OWN_FAULT_SIGNALS.has(f.signal ?? '')
        ? `rank ${f.rank} died of ${f.signal}, a fault of the program itself`
        : null;
    case 'exited':
      return `rank ${f.rank} ended with an error of its own`;
    case 'aborted':
      return `rank ${f.rank} aborted the job`;
    case 'start':
      return 'the job could not start';
    case 'signal':
      return `mpirun was told to stop (${f.signal})`;
    case 'preempted':
      return 'the job was preempted (a drain notice): it is checkpointed, restart it with lamrestart';
  }
}

/** The parameters of recovery, checked: a bad value is a usage error naming it. */
export function recoveryParams(ctx: SsiContext): { limit: number; spares: string } {
  registerMpiParams(ctx.params);
  const limit = ctx.params.get<number>('crlam_base_recover');
  if (!Number.isInteger(limit) || limit < 0) {
    throw new UsageError(`crlam_base_recover must be 0 or a number of recoveries, got ${limit}`);
  }
  const spares = ctx.params.get<string>('crlam_base_recover_nodes').trim();
  if (spares !== '') {
    try {
      const item = parseNodeSpecWord(spares);
      if (item.kind !== 'nodes') throw new Error('expected nodes');
    } catch {
      throw new UsageError(
        `crlam_base_recover_nodes "${spares}": expected a list of nodes such as n4 or n4-5,7`,
      );
    }
  }
  return { limit, spares };
}

/** Runs the job, and runs it again from its latest complete series after a recoverable failure. */
export async function runRecoverable(j: RecoverableJob): Promise<number> {
  const { limit, spares } = recoveryParams(j.ctx);
  const say = j.job.say;
  let placements = j.placements;
  let from = j.restart;
  let latest: CommittedSeries | null = j.restart
    ? {
        series: j.restart.series,
        dir: seriesRoot(j.restart.seriesDir),
        at: Date.parse(j.restart.createdAt),
      }
    : null;
  let restarting: { index: number; failedAt: number; series: number } | null = null;
  const lost = { workMs: 0, restartMs: 0 };
  for (let run = 0; ; run++) {
    const cr = j.job.noWait ? null : await setUpCheckpointing(j.ctx, j.jobId, j.record, say);
    let failure: JobFailure | null = null;
    let failedAt = 0;
    let code = 1;
    const recovery = restarting;
    try {
      // A series of process images restarts as the module's restore commands, not the programs.
      const standIns = from && cr ? await restoreCommands(cr, from.seriesDir, placements) : null;
      code = await runJob(j.client, placements, {
        argvOf: standIns ? (rank) => standIns.get(rank) : undefined,
        ...j.job,
        // Each run gets its own id: the lamds' clean-up of the ended run is not the new one's.
        jobId: run === 0 ? j.jobId : `${j.jobId}-r${run}`,
        rankEnv: { ...j.rankEnv, ...(from ? { [CR_RESTART_ENV]: from.seriesDir } : {}) },
        control: cr
          ? (control, job) => {
              cr.attach(control, job.size, job.end);
              if (recovery) void reportRestarted(cr, recovery, placements, lost, say);
            }
          : undefined,
        onStopSignal: (sig) => sig === 'SIGTERM' && cr !== null && cr.drain('SIGTERM'),
        onEnding: (why, f) => {
          failure = f;
          failedAt = Date.now();
          cr?.ending(why);
        },
      });
    } finally {
      latest = newer(latest, cr?.latest() ?? null);
      await cr?.close(`it exited with status ${code}`);
    }
    const f = failure as JobFailure | null;
    if (!f || code === 0 || limit === 0) return finish(code, run, lost, say);
    const refusal = recoveryRefusal(f, cr, latest, run, limit);
    if (refusal) {
      say(`mpirun: not recovered: ${refusal}`);
      return finish(code, run, lost, say);
    }
    const chosen = await latestComplete(latest!.dir);
    if (!chosen) {
      say(`mpirun: not recovered: no complete checkpoint series is left in ${latest!.dir}`);
      return finish(code, run, lost, say);
    }
    const takenAt = chosen.series === latest!.series ? latest!.at : Date.parse(chosen.createdAt);
    const workMs = Math.max(0, failedAt - takenAt);
    lost.workMs += workMs;
    try {
      placements = await placeAgain(j.client, placements, spares);
    } catch (err) {
      say(`mpirun: not recovered: ${(err as Error).message}`);
      return finish(code, run, lost, say);
    }
    say(
      `mpirun: recovery ${run + 1} of ${limit}: restarting the job from series ${chosen.series} (${chosen.seriesDir}); ` +
        `lost time: ${seconds(workMs)} s of work since that checkpoint`,
    );
    from = { seriesDir: chosen.seriesDir, series: chosen.series, createdAt: chosen.createdAt };
    restarting = { index: run + 1, failedAt, series: chosen.series };
  }
}

function recoveryRefusal(
  f: JobFailure,
  cr: JobCheckpointing | null,
  latest: CommittedSeries | null,
  run: number,
  limit: number,
): string | null {
  const own = whyNotRecovered(f);
  if (own) return own;
  if (!cr) return 'the job is not checkpointable (no cr module selected)';
  if (!latest) return 'the job failed before its first complete checkpoint';
  if (run >= limit) return `the job was recovered ${limit} time(s) already (crlam_base_recover)`;
  return null;
}

/** What the cr module starts for each rank of a restart from `seriesDir` (none: the programs). */
async function restoreCommands(
  cr: JobCheckpointing,
  seriesDir: string,
  placements: readonly Placement[],
): Promise<Map<number, string[]> | null> {
  const argvs = new Map<number, string[]>();
  for (const p of placements) {
    const argv = await cr.restartArgv(seriesDir, p.rank);
    if (argv) argvs.set(p.rank, argv);
  }
  return argvs.size > 0 ? argvs : null;
}

/** The newest complete series of a job's checkpoint directory. */
async function latestComplete(
  dir: string,
): Promise<{ series: number; seriesDir: string; createdAt: string } | null> {
  const store = await CheckpointStore.open(dir, { create: false });
  const chosen = (await store.examine()).find((s) => s.complete);
  if (!chosen) return null;
  return {
    series: chosen.series,
    seriesDir: store.seriesDir(chosen.series),
    createdAt: chosen.manifest!.createdAt,
  };
}

/**
 * Where the restarted job runs: every rank where it was, except the ranks of a node whose lamd no
 * longer answers: those go to the spare nodes (one spare per lost node, in order) or, with none
 * named, round-robin over the job's remaining nodes.
 */
export async function placeAgain(
  client: LamClient,
  placements: readonly Placement[],
  spareSpec: string,
): Promise<Placement[]> {
  const universe = await client.universe();
  const used = [...new Map(placements.map((p) => [p.node.id, p.node])).values()];
  const spares = spareSpec ? resolveNodeSpec([parseNodeSpecWord(spareSpec)], universe) : [];
  const answers = await Promise.all([...used, ...spares].map((n) => lamdAnswers(client, n)));
  const alive = new Set([...used, ...spares].filter((_, i) => answers[i]).map((n) => n.id));
  const lostNodes = used.filter((n) => !alive.has(n.id));
  if (lostNodes.length === 0) return [...placements];
  const targets = spares.length
    ? spares.filter((n) => alive.has(n.id) && !used.some((u) => u.id === n.id))
    : used.filter((n) => alive.has(n.id));
  if (targets.length === 0) {
    const lostNames = lostNodes.map((n) => `n${n.id}`).join(', ');
    throw new Error(
      spares.length
        ? `lost ${lostNames} and none of the spare nodes (crlam_base_recover_nodes ${spareSpec}) answers`
        : `lost ${lostNames} and no node of the job is left to restart on`,
    );
  }
  const moved = new Map<number, UniverseNode>();
  let k = 0;
  return placements.map((p) => {
    if (alive.has(p.node.id)) return p;
    // One spare takes all of a lost node's ranks; without spares, ranks spread round-robin.
    const node = spares.length
      ? (moved.get(p.node.id) ?? targets[moved.size % targets.length]!)
      : targets[k++ % targets.length]!;
    moved.set(p.node.id, node);
    return { ...p, node };
  });
}

/** Does the lamd of `node` answer (within PING_TIMEOUT_MS)? */
async function lamdAnswers(client: LamClient, node: UniverseNode): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
  });
  try {
    return await Promise.race([
      client.ping(node.id).then(
        () => true,
        (err) => (isLamError(err) ? false : Promise.reject(err)),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Once every restarted rank finished MPI.init: how long the restart took since the failure. */
async function reportRestarted(
  cr: JobCheckpointing,
  r: { index: number; failedAt: number; series: number },
  placements: readonly Placement[],
  lost: { restartMs: number },
  say: (line: string) => void,
): Promise<void> {
  if (!(await cr.everyRankReady())) return;
  const ms = Date.now() - r.failedAt;
  lost.restartMs += ms;
  const nodes = [...new Set(placements.map((p) => `n${p.node.id}`))].join(',');
  say(
    `mpirun: recovery ${r.index}: every rank runs again from series ${r.series} on ${nodes}; the restart took ${seconds(ms)} s`,
  );
}

function finish(
  code: number,
  recoveries: number,
  lost: { workMs: number; restartMs: number },
  say: (line: string) => void,
): number {
  if (recoveries > 0) {
    say(
      `mpirun: the job was recovered ${recoveries} time(s); lost time in all: ${seconds(lost.workMs + lost.restartMs)} s ` +
        `(${seconds(lost.workMs)} s of work done again, ${seconds(lost.restartMs)} s of restarts)`,
    );
  }
  return code;
}

function newer(a: CommittedSeries | null, b: CommittedSeries | null): CommittedSeries | null {
  if (!a) return b;
  if (!b) return a;
  return b.at >= a.at ? b : a;
}

/** `<dir>/series-<n>` → `<dir>`. */
function seriesRoot(seriesDir: string): string {
  return dirname(seriesDir);
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(1);
}
