import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  isProcessAlive,
  lamBin,
  listSessionDirs,
  readSessionInfo,
  sessionDirFor,
  wipeSession,
} from '@ssi/lam';
import { slurmAvailable } from '@ssi/slurm-cluster';
import {
  startTestbed,
  type Testbed,
  type TestHost,
  testbedAvailable,
  testbedStatus,
} from '@ssi/testbed';
import {
  type BenchCommand,
  type Column,
  formatTable,
  Options,
  repeat,
  type Stat,
  writeResults,
} from '../harness';
import {
  type ChildResult,
  killGroup,
  type LamdRecord,
  runSlurmJobDriver,
  SLURM_JOB_ARG,
  SLURM_VARIANTS,
  SlurmBootRun,
  type SlurmRow,
  sleep,
  slurmColumns,
  timedRun,
} from './boot-slurm';

const USAGE = `usage: node tools/bench/dist/cli.js boot [options]

Wall time of lamboot (packages/cli/dist/bin/lamboot.js, run as a child process) to 1, 2, 4 and 8
test hosts of tools/testbed (one sshd per 127.0.0.N): with the rsh boot module over ssh, with the
linear algorithm (boot_base_algorithm linear: each node is started and calls back before the
next) and the linear-windowed one (boot_base_algorithm linear_windowed: up to
boot_base_linear_win_size nodes starting at once); and with the tm (PBS) boot module in a
reproduced PBS job (PBS_* variables, a node file naming the test hosts, the stand-in pbsdsh of
plugins/boot-tm/test/fixtures, which starts each task over ssh: NOT a real PBS MOM), which is
always linear-windowed. Each repetition is lamboot (timed), then lamhalt (not timed); medians
over repetitions, after one warm-up boot per point.

slurm (a second table): a REAL one-node Slurm (munged, slurmctld, slurmd of tools/slurm-cluster,
private, started and stopped by this run) and, inside one sbatch job, lamboot --ssi boot slurm
(the lamds as one srun step) and lamboot --ssi boot rsh (this node alone, default schema),
alternating, one warm-up each; the ratio slurm/rsh. On by default when the cluster can run here
(else skipped with the reason); no testbed needed for it.

options:
  --hosts LIST        numbers of test hosts (default 1,2,4,8; the testbed starts the largest)
  --reps N            repetitions per point (default 5; the median is reported)
  --only LIST         run only some of: linear,windowed,tm,slurm (default all; slurm only when
                      Slurm can run here, and an error when it is asked for and cannot)
  --win-size N        boot_base_linear_win_size of the windowed column (default 5)

Needs what the testbed needs (Linux, root, openssh-server; see tools/testbed/README.md) and a
built @ssi/cli; slurm needs what tools/slurm-cluster needs (root, slurm-wlm, munge) and a built
@ssi/boot-slurm. Uses the private session suffix bench-boot-<pid>: other universes are not touched.`;

/**
 * One way of booting: a column of the table. `ssi` goes on lamboot's command line as
 * `--ssi name value`; `env` is added to lamboot's (and lamhalt's) environment. The first variant
 * is the baseline every other one is divided by.
 *
 * The `tm` column (PBS) is `ssi: { boot: 'tm' }` and an `env` that reproduces the job
 * (PBS_NODEFILE written from `ctx.hosts` into `ctx.workDir`, PBS_* variables, the stand-in pbsdsh
 * on PATH, which launches on the named test host through the testbed's ssh).
 */
export interface BootVariant {
  /** name for --only and the JSON results */
  name: string;
  /** column title */
  title: string;
  /** one line for the README / help */
  summary: string;
  /** SSI parameters for lamboot (`--ssi name value`) */
  ssi: Record<string, string>;
  /** extra environment for lamboot and lamhalt */
  env?: (ctx: VariantContext) => Record<string, string>;
}

export interface VariantContext {
  testbed: Testbed;
  /** the hosts of this measurement (hosts[0] is where lamboot runs) */
  hosts: TestHost[];
  /** the boot schema of this measurement */
  schema: string;
  /** a private directory of this run (removed at the end) */
  workDir: string;
}

/** The boot variants, baseline first. Parameter names are those of @ssi/lam's boot base. */
export function bootVariants(winSize: number): BootVariant[] {
  return [
    {
      name: 'linear',
      title: 'linear',
      summary: 'rsh over ssh, boot_base_algorithm linear',
      ssi: { boot: 'rsh', boot_base_algorithm: 'linear' },
    },
    {
      name: 'windowed',
      title: `windowed(${winSize})`,
      summary: `rsh over ssh, boot_base_algorithm linear_windowed, boot_base_linear_win_size ${winSize}`,
      ssi: {
        boot: 'rsh',
        boot_base_algorithm: 'linear_windowed',
        boot_base_linear_win_size: String(winSize),
      },
    },
    {
      name: 'tm',
      title: `tm(${winSize})`,
      summary: `tm (PBS) through the stand-in pbsdsh (tasks started over ssh), linear_windowed, boot_base_linear_win_size ${winSize}`,
      ssi: { boot: 'tm', boot_base_linear_win_size: String(winSize) },
      env: pbsJobEnv,
    },
  ];
}

/** The stand-in pbsdsh of the tm module's tests (this repository's, not PBS's). */
export function pbsdshStandIn(): string {
  return resolve(repoRoot(), 'plugins', 'boot-tm', 'test', 'fixtures', 'pbsdsh');
}

let pbsJobs = 0;

/** A reproduced PBS job on `ctx.hosts`: node file (one line per host), PBS_*, pbsdsh on PATH. */
export function pbsJobEnv(ctx: VariantContext): Record<string, string> {
  const bin = join(ctx.workDir, 'pbs-bin');
  if (!existsSync(bin)) {
    mkdirSync(bin);
    symlinkSync(pbsdshStandIn(), join(bin, 'pbsdsh'));
  }
  const nodefile = join(ctx.workDir, `pbs-nodes-${ctx.hosts.length}`);
  writeFileSync(nodefile, ctx.hosts.map((h) => `${h.address}\n`).join(''));
  return {
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    PBS_ENVIRONMENT: 'PBS_BATCH',
    PBS_JOBID: `${process.pid}.${++pbsJobs}.bench-standin`,
    PBS_NODEFILE: nodefile,
    PBS_O_WORKDIR: ctx.workDir,
    SSI_PBSDSH_SSH: ctx.testbed.sshCommand.join(' '),
    LAM_MPI_SSI_boot_tm_spool_dir: join(ctx.workDir, 'tm-spool'),
  };
}

export interface BootPlan {
  hosts: number[];
  reps: number;
  winSize: number;
  /** the testbed variants (columns of the first table); none: no testbed */
  variants: BootVariant[];
  /** the real Slurm part: 'auto' (default) runs it when Slurm can run here, 'on' must run it */
  slurm: 'auto' | 'on' | 'off';
}

const DEFAULT_HOSTS = [1, 2, 4, 8];
const KNOWN = ['hosts', 'reps', 'only', 'win-size'];

function positiveInt(o: Options, name: string, dflt: number): number {
  const n = o.number(name, dflt);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} needs a whole number >= 1`);
  return n;
}

/** Options to a plan; throws on anything it cannot honour (typos included). */
export function planBoot(args: string[]): BootPlan {
  const o = new Options(args);
  const unknown = o.unknown(KNOWN);
  if (unknown.length > 0) throw new Error(`unknown option --${unknown.join(', --')}`);
  if (o.positional.length > 0) throw new Error(`unexpected argument ${o.positional[0]}`);
  const reps = positiveInt(o, 'reps', 5);
  const winSize = positiveInt(o, 'win-size', 5);
  const hostList = o.string('hosts', DEFAULT_HOSTS.join(','));
  const hosts = hostList.split(',').map((s) => {
    const n = Number(s.trim());
    // the testbed's limit: 127.0.0.2 ... 127.0.0.254
    if (!Number.isInteger(n) || n < 1 || n > 253)
      throw new Error(`--hosts: "${s}" is not a number of hosts (1 ... 253)`);
    return n;
  });
  const all = bootVariants(winSize);
  const names = [...all.map((v) => v.name), 'slurm'];
  const only = o.has('only') ? o.string('only', '').split(',') : undefined;
  const bad = only?.filter((n) => !names.includes(n)) ?? [];
  if (bad.length > 0 || only?.length === 0)
    throw new Error(`--only: unknown "${bad.join(',')}" (use ${names.join(',')})`);
  return {
    hosts: [...new Set(hosts)].sort((a, b) => a - b),
    reps,
    winSize,
    variants: only ? all.filter((v) => only.includes(v.name)) : all,
    slurm: only ? (only.includes('slurm') ? 'on' : 'off') : 'auto',
  };
}

export interface BootRow {
  hosts: number;
  /** variant name -> wall time of lamboot in ms */
  results: Record<string, Stat>;
  /** variant name -> wall time of each lamhalt after a boot, warm-up included (not measured) */
  lamhaltMs?: Record<string, number[]>;
}

/** median(variant) / median(baseline) for every variant after the baseline, by name. */
export function ratios(row: BootRow, variants: BootVariant[]): Record<string, number> {
  const [base, ...rest] = variants;
  const out: Record<string, number> = {};
  const b = base && row.results[base.name];
  for (const v of rest) {
    const s = row.results[v.name];
    out[v.name] = b && s ? s.median / b.median : Number.NaN;
  }
  return out;
}

export function bootColumns(variants: BootVariant[]): Column<BootRow>[] {
  const [base] = variants;
  return [
    { title: 'hosts', value: (r) => r.hosts, digits: 0 },
    ...variants.map(
      (v): Column<BootRow> => ({
        title: `${v.title} ms`,
        value: (r) => r.results[v.name]?.median,
        digits: 0,
      }),
    ),
    ...variants.slice(1).map(
      (v): Column<BootRow> => ({
        title: `${v.name}/${base!.name}`,
        value: (r) => ratios(r, variants)[v.name],
      }),
    ),
  ];
}

// ---- running lamboot / lamhalt ------------------------------------------------------------

/** The repository: the first directory upward holding pnpm-workspace.yaml (from dist/ or src/). */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'pnpm-workspace.yaml'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('boot: cannot find the repository (pnpm-workspace.yaml)');
    dir = parent;
  }
  return dir;
}

/** packages/cli/dist/bin of this repository. */
function cliBinDir(): string {
  return resolve(repoRoot(), 'packages', 'cli', 'dist', 'bin');
}

class BootRun {
  readonly suffix = `bench-boot-${process.pid}`;
  readonly lamds: LamdRecord[] = [];
  forcedWipes = 0;
  /** wall time of the last lamhalt, ms (not part of the measurement; shown in the progress) */
  lastHaltMs = Number.NaN;
  tb: Testbed | undefined;
  workDir: string | undefined;
  prefix = '';
  private current: ChildProcess | undefined;
  aborted: NodeJS.Signals | undefined;
  private sshdPids: number[] = [];

  constructor(readonly binDir: string) {}

  /** The environment of the test recipe (plugins/boot-rsh/test/rsh-testbed.test.ts). */
  env(first: TestHost, extra: Record<string, string>): Record<string, string> {
    return {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/',
      LAM_MPI_SESSION_HOST: first.address,
      LAM_MPI_SESSION_SUFFIX: this.suffix,
      LAM_MPI_SSI_boot_rsh_agent: this.tb!.sshCommand.join(' '),
      LAM_MPI_SSI_boot_base_timeout: '20',
      ...extra,
    };
  }

  async start(maxHosts: number): Promise<void> {
    this.workDir = mkdtempSync(join(tmpdir(), 'ssi-bench-boot-'));
    // where the remote shell finds hboot: prefix= in the boot schema, as in the rsh tests
    this.prefix = join(this.workDir, 'prefix');
    mkdirSync(join(this.prefix, 'bin'), { recursive: true });
    symlinkSync(lamBin('hboot'), join(this.prefix, 'bin', 'hboot'));
    const t0 = Date.now();
    this.tb = await startTestbed({ hosts: maxHosts });
    this.sshdPids = testbedStatus(this.tb.dir)
      .hosts.map((h) => h.pid)
      .filter((p): p is number => p !== undefined);
    process.stderr.write(
      `boot: testbed of ${maxHosts} host(s) up in ${((Date.now() - t0) / 1000).toFixed(1)} s: ` +
        `${this.tb.hosts.map((h) => h.address).join(' ')}; session suffix ${this.suffix}\n`,
    );
  }

  schema(n: number): { hosts: TestHost[]; file: string } {
    const hosts = this.tb!.hosts.slice(0, n);
    const file = this.tb!.writeBootSchema(`bench-hosts-${n}`, {
      hosts,
      perHost: () => `prefix=${this.prefix}`,
    });
    return { hosts, file };
  }

  /** Runs a CLI command of @ssi/cli in its own process group (so that it can be killed whole). */
  private run(
    command: 'lamboot' | 'lamhalt',
    args: string[],
    env: Record<string, string>,
    timeoutMs: number,
  ): Promise<ChildResult> {
    if (this.aborted) return Promise.reject(new Error(`interrupted (${this.aborted})`));
    return timedRun(join(this.binDir, `${command}.js`), args, {
      env,
      cwd: this.workDir,
      timeoutMs,
      onChild: (c) => {
        this.current = c;
      },
    });
  }

  killCurrent(sig: NodeJS.Signals): void {
    killGroup(this.current, sig);
  }

  /** One repetition: lamboot (timed), record its lamds, lamhalt, wait until all are gone. */
  async once(variant: BootVariant, n: number): Promise<number> {
    const { hosts, file } = this.schema(n);
    const ctx: VariantContext = { testbed: this.tb!, hosts, schema: file, workDir: this.workDir! };
    const env = this.env(hosts[0]!, variant.env?.(ctx) ?? {});
    const ssi = Object.entries(variant.ssi).flatMap(([k, v]) => ['--ssi', k, v]);
    const boot = await this.run('lamboot', [...ssi, file], env, 30_000 + 20_000 * n);
    for (const h of hosts) {
      const info = readSessionInfo(sessionDirFor(h.address, this.suffix));
      if (info)
        this.lamds.push({ host: h.address, pid: info.lamdPid, startTime: info.lamdStartTime });
    }
    if (boot.code !== 0) {
      const how = boot.signal ? `was killed by ${boot.signal}` : `exited with ${boot.code}`;
      throw new Error(
        `lamboot ${[...ssi, file].join(' ')} ${how} after ${boot.ms.toFixed(0)} ms:\n${boot.stderr.trim()}`,
      );
    }
    await this.halt(hosts, env);
    return boot.ms;
  }

  private async halt(hosts: TestHost[], env: Record<string, string>): Promise<void> {
    const r = await this.run('lamhalt', [], env, 60_000);
    this.lastHaltMs = r.ms;
    if (r.code !== 0)
      process.stderr.write(`boot: warning: lamhalt exited with ${r.code}: ${r.stderr.trim()}\n`);
    // the next boot must find no lamd and no session directory of this suffix
    const mine = new Set(hosts.map((h) => h.address));
    const ours = this.lamds.filter((l) => mine.has(l.host));
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
      if (!ours.some((l) => isProcessAlive(l.pid, l.startTime)) && !this.sessionDirsLeft().length)
        return;
      await sleep(25);
    }
    process.stderr.write('boot: warning: lamhalt left lamds or session directories; wiping\n');
    await this.wipe();
  }

  /** Session directories of this run's suffix on any test host (or anywhere else). */
  sessionDirsLeft(): string[] {
    const dirs = new Set(listSessionDirs(this.suffix));
    for (const h of this.tb?.hosts ?? []) {
      const d = sessionDirFor(h.address, this.suffix);
      if (existsSync(d)) dirs.add(d);
    }
    return [...dirs];
  }

  /** Stops every lamd of this suffix on every test host and removes its session directory. */
  async wipe(): Promise<void> {
    for (const h of this.tb?.hosts ?? []) {
      if (existsSync(sessionDirFor(h.address, this.suffix))) {
        this.forcedWipes++;
        await wipeSession(h.address, this.suffix, 2000).catch(() => {});
      }
    }
    this.killLamdsSync();
  }

  /** Last resort, synchronous (usable from 'exit'): SIGKILL every lamd this run recorded or left. */
  killLamdsSync(): void {
    const targets = [...this.lamds];
    for (const dir of this.sessionDirsLeft()) {
      const info = readSessionInfo(dir);
      if (info) targets.push({ host: dir, pid: info.lamdPid, startTime: info.lamdStartTime });
      rmSync(dir, { recursive: true, force: true });
    }
    for (const l of targets) {
      if (isProcessAlive(l.pid, l.startTime)) {
        try {
          process.kill(l.pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
    }
  }

  /** Everything this run started is gone afterwards: lamboot/lamhalt, lamds, sshds, files. */
  async cleanup(): Promise<string> {
    this.killCurrent('SIGTERM');
    await sleep(this.current ? 200 : 0);
    this.killCurrent('SIGKILL');
    // a lamd launched just before an interruption may write its session directory late
    await this.wipe();
    await sleep(300);
    await this.wipe();
    await this.tb?.stop();
    if (this.workDir) rmSync(this.workDir, { recursive: true, force: true });
    await sleep(100);
    const lamdsLeft = this.lamds.filter((l) => isProcessAlive(l.pid, l.startTime));
    const sshdsLeft = this.sshdPids.filter((p) => isProcessAlive(p));
    const parts = [
      `${this.lamds.length} lamd(s) started, ${lamdsLeft.length} left`,
      `${this.sshdPids.length} sshd(s) started, ${sshdsLeft.length} left`,
      ...(this.forcedWipes ? [`${this.forcedWipes} session(s) wiped by force`] : []),
    ];
    if (lamdsLeft.length || sshdsLeft.length) {
      throw new Error(
        `cleanup failed: ${parts.join('; ')} (lamd pids ${lamdsLeft.map((l) => l.pid).join(' ')}; sshd pids ${sshdsLeft.join(' ')})`,
      );
    }
    return parts.join('; ');
  }
}

async function runBoot(args: string[]): Promise<number> {
  if (args[0] === SLURM_JOB_ARG) return runSlurmJobDriver(args.slice(1)); // inside the Slurm job
  const plan = planBoot(args);
  if (plan.variants.length > 0) {
    const avail = testbedAvailable();
    if (!avail.ok) {
      console.error(`boot: the testbed cannot run here: ${avail.reason}`);
      return 1;
    }
  }
  const binDir = cliBinDir();
  if (!existsSync(join(binDir, 'lamboot.js'))) {
    console.error(`boot: ${join(binDir, 'lamboot.js')} is missing; build the workspace first`);
    return 1;
  }
  // the Slurm job runs this benchmark's own CLI as its driver
  const cliJs = resolve(repoRoot(), 'tools', 'bench', 'dist', 'cli.js');
  let slurmSkipped: string | undefined;
  if (plan.slurm !== 'off') {
    const s = slurmAvailable();
    const why = !s.ok ? s.reason : !existsSync(cliJs) ? `${cliJs} is missing` : undefined;
    if (why !== undefined && plan.slurm === 'on') {
      console.error(`boot: slurm: the private Slurm cluster cannot run here: ${why}`);
      return 1;
    }
    if (why !== undefined) {
      slurmSkipped = why;
      process.stderr.write(`boot: slurm: skipped: ${why}\n`);
    }
  }
  const slurmOn = plan.slurm !== 'off' && slurmSkipped === undefined;
  // lamds started through ssh use /tmp (sshd passes no TMPDIR): so must everyone else here
  delete process.env.TMPDIR;

  const run = new BootRun(binDir);
  const slurm = slurmOn
    ? new SlurmBootRun({
        binDir,
        cliJs,
        suffix: run.suffix,
        lamds: run.lamds,
        aborted: () => run.aborted,
      })
    : undefined;
  // Installed before the testbed's and the Slurm cluster's own handlers: this one runs first, and
  // because it exists the process does not die by the signal; the finally block below cleans up
  // (the Slurm fixture has already killed its daemons and jobs by then), then we exit.
  const onSignal = (sig: NodeJS.Signals) => {
    if (run.aborted) {
      // second signal: no more waiting
      run.killCurrent('SIGKILL');
      run.killLamdsSync();
      process.exit(130);
    }
    run.aborted = sig;
    process.stderr.write(
      `\nboot: ${sig}: stopping lamboot, lamds${slurm ? ', the Slurm cluster' : ''} and the testbed\n`,
    );
    run.killCurrent('SIGTERM');
  };
  const onExit = () => run.killLamdsSync();
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of signals) process.on(s, onSignal);
  process.on('exit', onExit);

  const rows: BootRow[] = [];
  let slurmRow: SlurmRow | undefined;
  let failure: unknown;
  try {
    if (plan.variants.length > 0) await run.start(Math.max(...plan.hosts));
    for (const n of plan.variants.length > 0 ? plan.hosts : []) {
      const row: BootRow = { hosts: n, results: {}, lamhaltMs: {} };
      rows.push(row);
      for (const v of plan.variants) {
        let i = -1; // -1: the warm-up boot
        const halts: number[] = [];
        row.lamhaltMs![v.name] = halts;
        row.results[v.name] = await repeat(plan.reps, async () => {
          const ms = await run.once(v, n);
          const what = i < 0 ? 'warm-up' : `rep ${i + 1}/${plan.reps}`;
          process.stderr.write(
            `boot: ${String(n).padStart(2)} host(s)  ${v.name.padEnd(9)} ${what.padEnd(9)} ` +
              `lamboot ${ms.toFixed(0).padStart(6)} ms   (lamhalt ${run.lastHaltMs.toFixed(0)} ms)\n`,
          );
          halts.push(run.lastHaltMs);
          i++;
          return ms;
        });
      }
    }
    if (slurm) slurmRow = await slurm.measure(plan.reps);
  } catch (err) {
    failure = err;
  } finally {
    // Slurm first: cancelling the job ends its lamds (and srun) the way Slurm does
    for (const step of [slurm?.cleanup.bind(slurm), run.cleanup.bind(run)]) {
      if (!step) continue;
      try {
        process.stderr.write(`boot: cleanup: ${await step()}\n`);
      } catch (err) {
        failure ??= err;
        process.stderr.write(`boot: ${(err as Error).message}\n`);
      }
    }
    for (const s of signals) process.off(s, onSignal);
    process.off('exit', onExit);
  }
  if (run.aborted) {
    console.error(`boot: interrupted by ${run.aborted}; nothing written`);
    return 130;
  }
  if (failure) throw failure;

  if (plan.variants.length > 0) {
    console.log(
      `lamboot wall time to test hosts: rsh over ssh (linear, windowed), tm through the stand-in pbsdsh (median of ${plan.reps}; ratio < 1: faster than linear)\n`,
    );
    console.log(formatTable(bootColumns(plan.variants), rows));
  }
  if (slurmRow) {
    console.log(
      `${plan.variants.length > 0 ? '\n' : ''}lamboot wall time inside one sbatch job of a real one-node Slurm (tools/slurm-cluster): rsh (this node alone) vs the slurm boot module (one srun step) (median of ${plan.reps}, alternating; ratio > 1: slurm slower)\n`,
    );
    console.log(formatTable(slurmColumns(), [slurmRow]));
  } else if (slurmSkipped !== undefined) {
    console.log(`${plan.variants.length > 0 ? '\n' : ''}slurm: skipped: ${slurmSkipped}`);
  }
  const file = writeResults('boot', {
    params: {
      hosts: plan.variants.length > 0 ? plan.hosts : [],
      reps: plan.reps,
      warmup: 1,
      winSize: plan.winSize,
      unit: 'ms (wall time of lamboot, spawn to exit)',
      variants: plan.variants.map((v) => ({ name: v.name, summary: v.summary, ssi: v.ssi })),
      env: {
        LAM_MPI_SSI_boot_rsh_agent: 'ssh -F <testbed>/ssh_config',
        LAM_MPI_SSI_boot_base_timeout: '20',
      },
    },
    rows: rows.map((r) => ({ ...r, ratios: ratios(r, plan.variants) })),
    slurm: slurmRow
      ? {
          jobId: slurm!.jobId,
          variants: SLURM_VARIANTS,
          order: 'warm-up of each, then each repetition both, alternating which goes first',
          env: { LAM_MPI_SSI_boot_base_timeout: '20' },
          ...slurmRow,
          samples: slurm!.samples,
        }
      : { skipped: slurmSkipped ?? 'not asked for (--only)' },
  });
  console.log(`\nresults: ${file}`);
  return 0;
}

export const bootCommand: BenchCommand = {
  name: 'boot',
  summary:
    'lamboot wall time over ssh test hosts: rsh linear vs linear-windowed, tm (PBS stand-in); real Slurm vs rsh',
  usage: USAGE,
  run: runBoot,
};
