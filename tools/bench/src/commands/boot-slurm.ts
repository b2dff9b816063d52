import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isProcessAlive, listSessionDirs, readSessionInfo } from '@ssi/lam';
import { markedProcesses, type SlurmCluster, startSlurmCluster } from '@ssi/slurm-cluster';
import { type Column, nowNs, type Stat, stat } from '../harness';

// The `slurm` part of the boot benchmark: lamboot with the slurm boot module inside one sbatch
// job of the private one-node cluster of tools/slurm-cluster, next to a one-node rsh boot in the
// same job (the recipe of plugins/boot-slurm/test/slurm-cluster.test.ts). The job runs this
// benchmark again as its driver (`boot __slurm-job <config>`), which times each lamboot exactly
// as the testbed columns are timed (spawn to exit, `timedRun`) and reports one line per boot on
// its standard output, the job's output file, which the benchmark follows.
//
// Also here: the timed child runner and the process checks boot.ts shares.

// ---- children and processes (shared with boot.ts) ----------------------------------------------

export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** spawn to exit */
  ms: number;
}

/**
 * Runs `node <script> ...args` in a process group of its own (so that it can be killed whole) and
 * times it from spawn to exit. On timeout the group is SIGKILLed and the promise rejects.
 */
export function timedRun(
  script: string,
  args: string[],
  opts: {
    env: Record<string, string | undefined>;
    cwd?: string;
    timeoutMs: number;
    /** the child, while it runs (undefined once it exited) */
    onChild?: (child: ChildProcess | undefined) => void;
  },
): Promise<ChildResult> {
  return new Promise((resolvePromise, reject) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const t0 = nowNs();
    const child = spawn(process.execPath, [script, ...args], {
      env: opts.env,
      cwd: opts.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    opts.onChild?.(child);
    child.stdout!.on('data', (b: Buffer) => out.push(b));
    child.stderr!.on('data', (b: Buffer) => err.push(b));
    const name = script.slice(script.lastIndexOf('/') + 1).replace(/\.js$/, '');
    const timer = setTimeout(() => {
      killGroup(child, 'SIGKILL');
      reject(new Error(`${name} did not finish within ${opts.timeoutMs / 1000} s`));
    }, opts.timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      opts.onChild?.(undefined);
      reject(e);
    });
    child.once('exit', (code, signal) => {
      const ms = (nowNs() - t0) / 1e6;
      clearTimeout(timer);
      opts.onChild?.(undefined);
      // output may still be in the pipes; a lamd never holds them, but do not wait forever
      const done = () =>
        resolvePromise({
          code,
          signal,
          ms,
          stdout: Buffer.concat(out).toString('utf8'),
          stderr: Buffer.concat(err).toString('utf8'),
        });
      const t = setTimeout(done, 1000);
      child.once('close', () => {
        clearTimeout(t);
        done();
      });
    });
  });
}

export function killGroup(child: ChildProcess | undefined, sig: NodeJS.Signals): void {
  if (!child?.pid) return;
  try {
    process.kill(-child.pid, sig);
  } catch {
    // gone
  }
}

/** A lamd this run started: pid and /proc start time (pids get reused). */
export interface LamdRecord {
  host: string;
  pid: number;
  startTime?: string;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function envOf(pid: number, name: string): string | undefined {
  try {
    const entry = readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .find((e) => e.startsWith(`${name}=`));
    return entry?.slice(name.length + 1);
  } catch {
    return undefined;
  }
}

// ---- what is measured, and the job's report ----------------------------------------------------

/** The two boots of the job, baseline first; both with the default schema (this node alone). */
export const SLURM_VARIANTS = [
  {
    name: 'rsh',
    summary: 'rsh, default boot schema (this node alone, started locally), inside the same job',
    ssi: { boot: 'rsh' },
  },
  {
    name: 'slurm',
    summary: 'the slurm boot module: every lamd started by one srun step of the job',
    ssi: { boot: 'slurm' },
  },
] as const;

export type SlurmVariantName = (typeof SLURM_VARIANTS)[number]['name'];

/** The hidden subcommand the job runs: `boot __slurm-job <config file>`. */
export const SLURM_JOB_ARG = '__slurm-job';

/** The prefix of the job driver's report lines. */
export const REPORT_TAG = 'SSI-BENCH-SLURM';

export interface JobConfig {
  reps: number;
  /** packages/cli/dist/bin */
  binDir: string;
  suffix: string;
  workDir: string;
}

/** One boot of the job: rep -1 is the warm-up. */
export interface JobSample {
  variant: SlurmVariantName;
  rep: number;
  bootMs: number;
  haltMs: number;
  lamdPid: number;
  lamdStartTime?: string;
  /** SLURM_STEP_ID of the lamd: a step of its own for slurm, the batch script's for rsh */
  step?: string;
  /** processes of the universe still there 10 s after lamhalt (then killed) */
  left?: string[];
}

export interface JobReport {
  samples: JobSample[];
  done: boolean;
  error?: string;
}

/**
 * The job's output so far: its report lines (`SSI-BENCH-SLURM {json}`) in order. Anything else
 * (Slurm's or Node's messages) is skipped, and so is a last line without its newline yet.
 */
export function parseJobOutput(text: string): JobReport {
  const report: JobReport = { samples: [], done: false };
  const lines = text.split('\n');
  lines.pop(); // '' after the last newline, or a line still being written
  for (const line of lines) {
    if (!line.startsWith(`${REPORT_TAG} `)) continue;
    const m = JSON.parse(line.slice(REPORT_TAG.length + 1)) as
      | { sample: JobSample }
      | { done: true }
      | { error: string };
    if ('sample' in m) report.samples.push(m.sample);
    else if ('done' in m) report.done = true;
    else if ('error' in m) report.error = m.error;
  }
  return report;
}

/** The order of the boots of repetition `rep`: alternating, so drift hits both the same. */
export function jobOrder(rep: number): SlurmVariantName[] {
  const names = SLURM_VARIANTS.map((v) => v.name);
  return rep % 2 === 0 ? names : names.reverse();
}

export interface SlurmRow {
  nodes: number;
  /** variant -> wall time of lamboot in ms (warm-up left out) */
  results: Partial<Record<SlurmVariantName, Stat>>;
  /** variant -> wall time of every lamhalt, warm-up included (not measured) */
  lamhaltMs: Partial<Record<SlurmVariantName, number[]>>;
  /** median(slurm) / median(rsh) */
  ratio: number;
}

/** Medians of the measured repetitions (rep >= 0) of each variant, and slurm/rsh. */
export function summarizeJob(samples: JobSample[]): SlurmRow {
  const row: SlurmRow = { nodes: 1, results: {}, lamhaltMs: {}, ratio: Number.NaN };
  for (const v of SLURM_VARIANTS) {
    const mine = samples.filter((s) => s.variant === v.name);
    const boots = mine.filter((s) => s.rep >= 0).map((s) => s.bootMs);
    if (boots.length > 0) row.results[v.name] = stat(boots);
    row.lamhaltMs[v.name] = mine.map((s) => s.haltMs);
  }
  const { rsh, slurm } = row.results;
  if (rsh && slurm) row.ratio = slurm.median / rsh.median;
  return row;
}

export function slurmColumns(): Column<SlurmRow>[] {
  return [
    { title: 'nodes', value: (r) => r.nodes, digits: 0 },
    { title: 'rsh ms', value: (r) => r.results.rsh?.median, digits: 0 },
    { title: 'slurm ms', value: (r) => r.results.slurm?.median, digits: 0 },
    { title: 'slurm/rsh', value: (r) => r.ratio },
  ];
}

// ---- inside the job ----------------------------------------------------------------------------

function report(m: { sample: JobSample } | { done: true } | { error: string }): void {
  process.stdout.write(`${REPORT_TAG} ${JSON.stringify(m)}\n`);
}

/** The universe's processes in this job: lamds, srun, the slurmstepd of a step (not the batch). */
function universeLeft(clusterDir: string, jobId: string): string[] {
  const step = new RegExp(`^slurmstepd: \\[${jobId}\\.\\d+\\]`);
  return markedProcesses(clusterDir)
    .filter((p) => /lamd\.js/.test(p.cmd) || /^(\S*\/)?srun\s/.test(p.cmd) || step.test(p.cmd))
    .map((p) => `${p.pid} ${p.cmd}`);
}

/**
 * `boot __slurm-job <config>`, run by the job: warm-up, then `reps` repetitions of both boots
 * (alternating order), each lamboot (timed), lamhalt, and a wait until the universe is gone.
 */
export async function runSlurmJobDriver(args: string[]): Promise<number> {
  try {
    const [file] = args;
    if (!file) throw new Error(`usage: boot ${SLURM_JOB_ARG} <config file>`);
    const cfg = JSON.parse(readFileSync(file, 'utf8')) as JobConfig;
    const jobId = process.env.SLURM_JOB_ID;
    const clusterDir = process.env.SSI_SLURM_CLUSTER;
    if (!jobId || !clusterDir)
      throw new Error('not inside a job of the private Slurm cluster (SLURM_JOB_ID unset)');
    // the lamds and this driver must agree on where session directories are
    delete process.env.TMPDIR;
    const env: Record<string, string | undefined> = {
      ...process.env,
      LAM_MPI_SESSION_SUFFIX: cfg.suffix,
      LAM_MPI_SSI_boot_base_timeout: '20',
    };
    delete env.LAM_MPI_SESSION_HOST;
    const bin = (c: string) => join(cfg.binDir, `${c}.js`);
    for (let rep = -1; rep < cfg.reps; rep++) {
      for (const name of jobOrder(rep)) {
        const v = SLURM_VARIANTS.find((x) => x.name === name)!;
        const ssi = Object.entries(v.ssi).flatMap(([k, val]) => ['--ssi', k, val]);
        const boot = await timedRun(bin('lamboot'), ssi, {
          env,
          cwd: cfg.workDir,
          timeoutMs: 60_000,
        });
        const dirs = listSessionDirs(cfg.suffix);
        const info = dirs.length === 1 ? readSessionInfo(dirs[0]!) : undefined;
        if (boot.code !== 0 || !info) {
          const how =
            boot.code !== 0
              ? boot.signal
                ? `was killed by ${boot.signal}`
                : `exited with ${boot.code}`
              : `left ${dirs.length} session directories of suffix ${cfg.suffix}, not 1`;
          throw new Error(
            `lamboot ${ssi.join(' ')} ${how} after ${boot.ms.toFixed(0)} ms:\n${boot.stderr.trim()}`,
          );
        }
        const step = envOf(info.lamdPid, 'SLURM_STEP_ID');
        const halt = await timedRun(bin('lamhalt'), [], {
          env,
          cwd: cfg.workDir,
          timeoutMs: 60_000,
        });
        const sample: JobSample = {
          variant: name,
          rep,
          bootMs: boot.ms,
          haltMs: halt.ms,
          lamdPid: info.lamdPid,
          lamdStartTime: info.lamdStartTime,
          step,
        };
        // the next boot must find nothing of this one
        let left: string[] = [];
        for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(25)) {
          left = universeLeft(clusterDir, jobId);
          if (isProcessAlive(info.lamdPid, info.lamdStartTime)) left.push(`lamd ${info.lamdPid}`);
          left.push(...listSessionDirs(cfg.suffix));
          if (left.length === 0) break;
        }
        if (left.length > 0) {
          sample.left = left;
          for (const l of universeLeft(clusterDir, jobId)) {
            try {
              process.kill(Number(l.split(' ')[0]), 'SIGKILL');
            } catch {}
          }
          for (const d of listSessionDirs(cfg.suffix)) rmSync(d, { recursive: true, force: true });
        }
        report({ sample });
        if (halt.code !== 0)
          throw new Error(`lamhalt after ${name} exited with ${halt.code}: ${halt.stderr.trim()}`);
        if (name === 'slurm' && (!step || step === process.env.SLURM_STEP_ID))
          throw new Error(
            `lamboot --ssi boot slurm: the lamd ${info.lamdPid} is not in a step of its own (SLURM_STEP_ID ${step ?? 'unset'}; the batch script's is ${process.env.SLURM_STEP_ID ?? 'unset'})`,
          );
      }
    }
    report({ done: true });
    return 0;
  } catch (err) {
    report({ error: (err as Error).message });
    return 1;
  }
}

// ---- in the benchmark --------------------------------------------------------------------------

const ACTIVE = new Set(['PENDING', 'CONFIGURING', 'RUNNING', 'COMPLETING', 'SUSPENDED']);

/** The Slurm cluster, the job, and everything they leave behind. */
export class SlurmBootRun {
  cluster: SlurmCluster | undefined;
  clusterDir: string | undefined;
  jobId: string | undefined;
  workDir: string | undefined;
  samples: JobSample[] = [];

  constructor(
    private readonly o: {
      binDir: string;
      /** tools/bench/dist/cli.js: the job runs it as its driver */
      cliJs: string;
      suffix: string;
      /** every lamd the job reports goes here too (the benchmark's final check) */
      lamds: LamdRecord[];
      /** set once a signal came: stop waiting */
      aborted: () => NodeJS.Signals | undefined;
    },
  ) {}

  private check(): void {
    const sig = this.o.aborted();
    if (sig) throw new Error(`interrupted (${sig})`);
  }

  /** Starts the cluster, runs the job, and returns its row. */
  async measure(reps: number): Promise<SlurmRow> {
    this.check();
    this.workDir = mkdtempSync(join(tmpdir(), 'ssi-bench-boot-slurm-'));
    const t0 = Date.now();
    // the fixture stops the cluster on exit and on SIGINT/SIGTERM/SIGHUP by itself
    const c = await startSlurmCluster({ commandTimeoutMs: 10_000 });
    this.cluster = c;
    this.clusterDir = c.dir;
    process.stderr.write(
      `boot: slurm: private one-node cluster up in ${((Date.now() - t0) / 1000).toFixed(1)} s ` +
        `(munged, slurmctld, slurmd; node ${c.node}; ${c.dir})\n`,
    );
    this.check();
    const config = join(this.workDir, 'slurm-job.json');
    const cfg: JobConfig = {
      reps,
      binDir: this.o.binDir,
      suffix: this.o.suffix,
      workDir: this.workDir,
    };
    writeFileSync(config, `${JSON.stringify(cfg)}\n`);
    const job = await c.sbatch(
      `exec "${process.execPath}" "${this.o.cliJs}" boot ${SLURM_JOB_ARG} "${config}"`,
      { name: 'ssi-bench-boot', cwd: this.workDir, env: { LAM_MPI_SESSION_SUFFIX: this.o.suffix } },
    );
    this.jobId = job.id;
    const deadline = Date.now() + 60_000 + (reps + 1) * 2 * 130_000;
    let lastState = 0;
    for (;;) {
      this.check();
      const r = parseJobOutput(job.readOutput());
      for (const s of r.samples.slice(this.samples.length)) {
        this.samples.push(s);
        this.o.lamds.push({ host: c.node, pid: s.lamdPid, startTime: s.lamdStartTime });
        const what = s.rep < 0 ? 'warm-up' : `rep ${s.rep + 1}/${reps}`;
        process.stderr.write(
          `boot: slurm job ${job.id}  ${s.variant.padEnd(5)} ${what.padEnd(9)} ` +
            `lamboot ${s.bootMs.toFixed(0).padStart(6)} ms   (lamhalt ${s.haltMs.toFixed(0)} ms` +
            `${s.step !== undefined ? `, lamd in step ${job.id}.${s.step}` : ''})\n`,
        );
        if (s.left)
          process.stderr.write(
            `boot: warning: slurm: 10 s after lamhalt still there (killed): ${s.left.join('; ')}\n`,
          );
      }
      if (r.error) throw new Error(`slurm job ${job.id}: ${r.error}`);
      if (r.done) break;
      if (Date.now() - lastState > 1000) {
        lastState = Date.now();
        const state = await c.jobState(job.id);
        this.check();
        if (state && !ACTIVE.has(state)) {
          // the driver may have written its last lines just before the job ended
          const again = parseJobOutput(job.readOutput());
          if (again.done || again.error || again.samples.length > this.samples.length) continue;
          throw new Error(
            `slurm job ${job.id} ended ${state} without finishing; its output:\n${job.readOutput().trim()}`,
          );
        }
      }
      if (Date.now() > deadline) throw new Error(`slurm job ${job.id} did not finish in time`);
      await sleep(200);
    }
    await c.waitForState(job.id, 'COMPLETED', 30_000);
    return summarizeJob(this.samples);
  }

  /**
   * Stops the cluster (every job cancelled, slurmd, slurmctld and munged stopped, every process a
   * job left killed), removes the work directory, and says what is left (throws if anything is).
   */
  async cleanup(): Promise<string> {
    let failure: unknown;
    try {
      await this.cluster?.stop();
    } catch (err) {
      failure = err;
    }
    if (this.workDir) rmSync(this.workDir, { recursive: true, force: true });
    if (!this.clusterDir) {
      if (failure) throw failure;
      return 'slurm: no cluster was started';
    }
    const left = markedProcesses(this.clusterDir);
    const summary = `slurm: job ${this.jobId ?? '(none)'}, cluster stopped, ${left.length} of its processes left`;
    if (left.length > 0)
      throw new Error(`${summary}: ${left.map((p) => `${p.pid} ${p.cmd}`).join('; ')}`);
    if (failure) throw failure;
    return summary;
  }
}
