import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchRoot, runChild, sourceState, withDriverWorkDir } from '../drivers';
import {
  type BenchCommand,
  type Column,
  formatSize,
  formatTable,
  nowNs,
  Options,
  prefixedJson,
  type Stat,
  stat,
  writeResults,
} from '../harness';
import { PLAN_NAMES, type PlansOptions, parsePlans, planColumns, runPlans } from './cr-plans';
import { parseDriverOutput } from './pingpong-output';
import { allowedCpus, chooseCpus, driverArgs, iterations, type Point } from './pingpong-plan';

const USAGE = `usage: node tools/bench/dist/cli.js cr [options]

Checkpoint/restart costs (issue #14 "Measure", the dissertation's Tables 7.4 and 7.5, Fig. 7.14).
Every job runs through the real mpirun (packages/cli/dist/bin/mpirun.js) in a private one-node
universe; ratios are taken within this run.
  pingpong  ping-pong of 2 ranks (programs/pingpong-mpi.mjs): --ssi rpi tcp against --ssi rpi
            crtcp --ssi cr self (checkpointable, no checkpoint taken); latency and bandwidth;
            rank 0 pinned to the first CPU of --cpus, rank 1 to the second, in both columns
            (a rank that polls otherwise lands wherever the scheduler puts it, differently in
            each run: the noise would hide a 1 % difference)
  heat      examples/heat.ts: the same two configurations, wall time
  coord     coordination time of one checkpoint against the number of ranks (--np): every rank
            asks for checkpoints itself (programs/cr-coord.mjs), the outcome's phases say where
            the time went (prepare, drain+save, commit)
  interval  examples/heat.ts checkpointed every N seconds (--ssi crlam_self_interval N) against
            the same job with no checkpoint (Table 7.5), overhead %
  plans     (only when named, or with --plans) checkpoint time and bytes written per storage plan
            (--ssi crlam_self_plan) against local, --plans-np ranks with --state-sizes of state
            each (programs/cr-plans.mjs): time to a complete series, time the ranks are held
Rounds are interleaved: round r runs every column once, in an order rotated each round.

options:
  --parts LIST        some of pingpong,heat,coord,interval (default: all)
  --reps N            rounds of the pingpong, heat and interval columns (default 5; medians)
  --lat-sizes LIST    ping-pong latency sizes (default 0,1k)
  --bw-sizes LIST     ping-pong bandwidth sizes (default 64k,1m,4m)
  --np LIST           rank counts of coord (default 1,2,3,4,5,6,7,8)
  --checkpoints N     recorded checkpoints per rank count (default 10), after 2 unrecorded ones
  --heat-np N         ranks of the heat runs (default 4)
  --heat-args N,TOL   heat.ts's plate size and tolerance (default 200,1e-4)
  --intervals LIST    checkpoint intervals in whole seconds (default 1,2)
  --plans LIST        storage plans of the plans part (default local,duplicate,parity; local is
                      always measured: the baseline). Giving it runs the plans part
  --state-sizes LIST  state per rank of the plans part (default 1m,64m)
  --plans-np N        ranks of the plans part (default 4)
  --parity-set N      crlam_self_parity_set of the parity plan (default 2)
  --plan-checkpoints N  recorded checkpoints per plans job (default 3), after 1 unrecorded
  --cpus A,B|none     the ping-pong's CPUs (default: the first two this process may use; none:
                      the scheduler decides)
  --poll-us N         --ssi mpi_base_poll_us N for the ping-pong's jobs (default: not set, each
                      rank chooses by its node's load; 0: the ranks sleep between messages, as
                      on a loaded machine; 100: they poll, as on a quiet one)
  --quick             a tenth of the ping-pong iterations, 3 checkpoints, --reps 2 unless given`;

export const CR_PARTS = ['pingpong', 'heat', 'coord', 'interval', 'plans'] as const;
/** The parts run when --parts is not given (plans writes hundreds of MB: only when asked). */
const DEFAULT_PARTS = ['pingpong', 'heat', 'coord', 'interval'];
export type CrPart = (typeof CR_PARTS)[number];

/** One configuration of mpirun that a column runs. */
export interface JobConfig {
  /** Short name (a key of the JSON). */
  key: string;
  title: string;
  rpi: 'tcp' | 'crtcp';
  /** `--ssi cr self`. */
  cr: boolean;
  /** `--ssi crlam_self_interval` (seconds, 0: none). */
  interval: number;
}

export const TCP: JobConfig = { key: 'tcp', title: 'tcp', rpi: 'tcp', cr: false, interval: 0 };
export const CRTCP: JobConfig = {
  key: 'crtcp',
  title: 'crtcp+cr self',
  rpi: 'crtcp',
  cr: true,
  interval: 0,
};
export const everyN = (n: number): JobConfig => ({
  key: `every${n}s`,
  title: `ckpt every ${n} s`,
  rpi: 'crtcp',
  cr: true,
  interval: n,
});

export interface CrPlan {
  parts: CrPart[];
  reps: number;
  quick: boolean;
  /** Ping-pong sizes (the union of both lists, each once). */
  points: Point[];
  nps: number[];
  checkpoints: number;
  warmupCheckpoints: number;
  /** CPUs of the ping-pong's ranks 0 and 1, or null: not pinned. */
  cpus: [number, number] | null;
  /** `mpi_base_poll_us` of the ping-pong's jobs, or null: the ranks' own choice. */
  pollUs: number | null;
  heatNp: number;
  heatArgs: [string, string];
  intervals: number[];
  /** The heat columns (parts heat and interval share one set of rounds). */
  heatColumns: JobConfig[];
  /** The plans part (see cr-plans.ts). */
  plansPart: PlansOptions;
}

function positiveInt(o: Options, name: string, dflt: number): number {
  const v = o.number(name, dflt);
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} needs an integer >= 1, got ${v}`);
  return v;
}

function nonNegativeInt(o: Options, name: string): number {
  const v = o.string(name, '');
  if (!/^\d+$/.test(v)) throw new Error(`--${name} needs a whole number >= 0, got "${v}"`);
  return Number(v);
}

function intList(o: Options, name: string, dflt: number[], what: string): number[] {
  if (!o.has(name)) return dflt;
  const raw = o.string(name, '');
  if (raw === '') throw new Error(`--${name} needs a comma-separated list of ${what}`);
  const xs = raw.split(',').map((s) => {
    const n = /^\d+$/.test(s.trim()) ? Number(s) : Number.NaN;
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name}: bad ${what} "${s}"`);
    return n;
  });
  return [...new Set(xs)].sort((a, b) => a - b);
}

export function planCr(args: string[]): CrPlan {
  const o = new Options(args);
  const known = [
    'parts',
    'reps',
    'lat-sizes',
    'bw-sizes',
    'np',
    'checkpoints',
    'heat-np',
    'heat-args',
    'intervals',
    'quick',
    'plans',
    'state-sizes',
    'plans-np',
    'parity-set',
    'plan-checkpoints',
    'cpus',
    'poll-us',
  ];
  const bad = o.unknown(known);
  if (bad.length > 0) throw new Error(`unknown option --${bad[0]}\n\n${USAGE}`);
  if (o.positional.length > 0)
    throw new Error(`unexpected argument "${o.positional[0]}"\n\n${USAGE}`);
  const quick = o.has('quick');
  const defaultParts = o.has('plans') ? 'plans' : DEFAULT_PARTS.join(',');
  const parts = o.string('parts', defaultParts).split(',').filter(Boolean);
  if (o.has('plans') && !parts.includes('plans')) parts.push('plans');
  for (const p of parts)
    if (!(CR_PARTS as readonly string[]).includes(p))
      throw new Error(`--parts: no part "${p}" (choose from ${CR_PARTS.join(',')})`);
  if (parts.length === 0) throw new Error('--parts: name at least one part');
  const reps = positiveInt(o, 'reps', quick ? 2 : 5);
  const latSizes = o.sizes('lat-sizes', [0, 1024]);
  const bwSizes = o.sizes('bw-sizes', [64 * 1024, 1024 ** 2, 4 * 1024 ** 2]);
  const sizes = [...new Set([...latSizes, ...bwSizes])].sort((a, b) => a - b);
  const points = sizes.map((size) => ({
    size,
    iters: iterations(size, quick),
    latency: latSizes.includes(size),
    bandwidth: bwSizes.includes(size),
  }));
  const nps = intList(o, 'np', [1, 2, 3, 4, 5, 6, 7, 8], 'rank count');
  const intervals = intList(o, 'intervals', [1, 2], 'interval (whole seconds)');
  const heatArgs = o.string('heat-args', '200,1e-4').split(',');
  if (
    heatArgs.length !== 2 ||
    !/^\d+$/.test(heatArgs[0]!) ||
    !Number.isFinite(Number(heatArgs[1])) ||
    Number(heatArgs[1]) <= 0
  )
    throw new Error(
      `--heat-args needs N,TOL (a plate size and a tolerance > 0), got "${heatArgs}"`,
    );
  const heatColumns: JobConfig[] = [];
  if (parts.includes('heat')) heatColumns.push(TCP);
  if (parts.includes('heat') || parts.includes('interval')) heatColumns.push(CRTCP);
  if (parts.includes('interval')) heatColumns.push(...intervals.map(everyN));
  return {
    parts: CR_PARTS.filter((p) => parts.includes(p)),
    reps,
    quick,
    points,
    nps,
    checkpoints: positiveInt(o, 'checkpoints', quick ? 3 : 10),
    warmupCheckpoints: 2,
    cpus: chooseCpus(o.has('cpus') ? o.string('cpus', '') : undefined, allowedCpus()),
    pollUs: o.has('poll-us') ? nonNegativeInt(o, 'poll-us') : null,
    heatNp: positiveInt(o, 'heat-np', 4),
    heatArgs: [heatArgs[0]!, heatArgs[1]!],
    intervals,
    heatColumns,
    plansPart: {
      plans: parsePlans(o.string('plans', PLAN_NAMES.join(','))),
      sizes: o.sizes('state-sizes', [1024 ** 2, 64 * 1024 ** 2]),
      np: positiveInt(o, 'plans-np', 4),
      paritySet: positiveInt(o, 'parity-set', 2),
      checkpoints: positiveInt(o, 'plan-checkpoints', 3),
    },
  };
}

/** The mpirun flags of a configuration (before the program). */
export function mpirunFlags(np: number, c: JobConfig, checkpointDir: string): string[] {
  const f = ['-np', String(np), '--ssi', 'rpi', c.rpi];
  if (c.cr) f.push('--ssi', 'cr', 'self', '--ssi', 'crlam_self_dir', checkpointDir);
  if (c.interval > 0) f.push('--ssi', 'crlam_self_interval', String(c.interval));
  return f;
}

// ---- what the jobs print ------------------------------------------------------------------

/** mpirun prefixes every line of rank r with `[r] `; the drivers' lines are read without it. */
export function stripRank(line: string): string {
  return line.replace(/^\[\d+\] /, '');
}

/** The phases of one checkpoint, as the outcome of `mpi.cr.checkpoint()` gives them (ms). */
export interface Phases {
  prepareMs: number;
  savedMs: number;
  drainMs: number;
  saveMs: number;
  drainSaveMs: number;
  commitMs: number;
}
export const PHASE_KEYS = [
  'prepareMs',
  'savedMs',
  'drainMs',
  'saveMs',
  'drainSaveMs',
  'commitMs',
] as const satisfies readonly (keyof Phases)[];

export interface CoordSample {
  np: number;
  ms: number[];
  phases: Phases[];
}

/** The CRCOORD line of programs/cr-coord.mjs, checked: `checkpoints` entries for `np` ranks. */
export function parseCoordOutput(text: string, np: number, checkpoints: number): CoordSample {
  const lines = text
    .split('\n')
    .map((l) => prefixedJson(stripRank(l), 'CRCOORD '))
    .filter((x) => x !== undefined);
  if (lines.length !== 1) throw new Error(`expected one CRCOORD line, got ${lines.length}`);
  const v = lines[0] as Partial<CoordSample>;
  const ok =
    v.np === np &&
    Array.isArray(v.ms) &&
    v.ms.length === checkpoints &&
    v.ms.every((x) => Number.isFinite(x) && x > 0) &&
    Array.isArray(v.phases) &&
    v.phases.length === checkpoints &&
    v.phases.every((p) => PHASE_KEYS.every((k) => Number.isFinite(p?.[k]) && p[k] >= 0));
  if (!ok)
    throw new Error(
      `malformed CRCOORD line (expected np ${np} and ${checkpoints} checkpoints with every phase): ${JSON.stringify(v).slice(0, 300)}`,
    );
  return v as CoordSample;
}

export interface HeatRun {
  /** heat.ts's own time (MPI.wtime around its loop), s. */
  seconds: number;
  sweeps: number;
  probe: number;
  /** Checkpoints mpirun took meanwhile (its `mpirun: checkpoint series N (B bytes, T ms)` lines). */
  checkpoints: number;
  checkpointMs: number[];
  /** Periodic checkpoints mpirun did not take, and why. */
  notTaken: string[];
}

/** What one heat job printed (rank 0's two lines, mpirun's checkpoint lines). */
export function parseHeatOutput(text: string): HeatRun {
  const m = /: (\d+) sweeps in ([\d.]+) s/.exec(text);
  const p = /temperature at row \d+, middle column: ([\d.]+)/.exec(text);
  if (!m || !p)
    throw new Error(`heat.ts printed no result:\n${text.split('\n').slice(-20).join('\n')}`);
  const checkpointMs = [
    ...text.matchAll(/mpirun: checkpoint series \d+ \(\d+ bytes, (\d+) ms\)/g),
  ].map((x) => Number(x[1]));
  const notTaken = [...text.matchAll(/mpirun: periodic checkpoint not taken: (.*)/g)].map(
    (x) => x[1]!,
  );
  return {
    seconds: Number(m[2]),
    sweeps: Number(m[1]),
    probe: Number(p[1]),
    checkpoints: checkpointMs.length,
    checkpointMs,
    notTaken,
  };
}

// ---- results ------------------------------------------------------------------------------

/** Least squares line through (x, y): y = intercept + slope x. */
export function linearFit(xs: readonly number[], ys: readonly number[]) {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
  }
  const slope = sxx === 0 ? 0 : sxy / sxx;
  return { intercept: my - slope * mx, slope };
}

/** The issue's target for the coordination time of `np` ranks: 50 ms + 2 ms per rank. */
export const coordTargetMs = (np: number) => 50 + 2 * np;

export interface CoordRow {
  np: number;
  ms: Stat;
  phases: Record<keyof Phases, Stat>;
}

export function coordRow(s: CoordSample): CoordRow {
  const phases = {} as Record<keyof Phases, Stat>;
  for (const k of PHASE_KEYS) phases[k] = stat(s.phases.map((p) => p[k]));
  return { np: s.np, ms: stat(s.ms), phases };
}

export function coordColumns(): Column<CoordRow>[] {
  const med = (k: keyof Phases) => (r: CoordRow) => r.phases[k].median;
  return [
    { title: 'np', value: (r) => String(r.np) },
    { title: 'total ms', value: (r) => r.ms.median, digits: 1 },
    { title: 'min', value: (r) => r.ms.min, digits: 1 },
    { title: 'coord ms', value: (r) => med('prepareMs')(r) + med('savedMs')(r), digits: 1 },
    { title: 'prepare', value: med('prepareMs'), digits: 1 },
    { title: 'drain+save', value: med('savedMs'), digits: 1 },
    { title: 'rank drain', value: med('drainMs'), digits: 1 },
    { title: 'rank save', value: med('saveMs'), digits: 1 },
    { title: 'commit', value: med('commitMs'), digits: 1 },
    { title: 'target', value: (r) => coordTargetMs(r.np), digits: 0 },
    {
      title: 'met',
      value: (r) => (med('prepareMs')(r) + med('savedMs')(r) <= coordTargetMs(r.np) ? 'yes' : 'NO'),
    },
  ];
}

export interface HeatRow {
  config: JobConfig;
  seconds: Stat;
  wallMs: Stat;
  checkpoints: Stat;
}

/** Overhead of `a` over `b` in percent (their medians), or null. */
export const overheadPct = (a?: Stat, b?: Stat) =>
  a && b ? (100 * (a.median - b.median)) / b.median : null;

export function heatColumns(rows: HeatRow[]): Column<HeatRow>[] {
  const base = (r: HeatRow) =>
    rows.find((x) => x.config.key === (r.config.interval ? 'crtcp' : 'tcp'));
  return [
    { title: 'configuration', value: (r) => r.config.title },
    { title: 'heat s', value: (r) => r.seconds.median, digits: 3 },
    { title: 'min s', value: (r) => r.seconds.min, digits: 3 },
    {
      title: 'min overhead %',
      value: (r) => {
        const b = base(r);
        return r.config.key === 'tcp' || !b
          ? null
          : (100 * (r.seconds.min - b.seconds.min)) / b.seconds.min;
      },
      digits: 1,
    },
    { title: 'mpirun s', value: (r) => r.wallMs.median / 1000, digits: 3 },
    { title: 'checkpoints', value: (r) => r.checkpoints.median, digits: 1 },
    {
      title: 'overhead %',
      value: (r) => (r.config.key === 'tcp' ? null : overheadPct(r.seconds, base(r)?.seconds)),
      digits: 1,
    },
    {
      title: 'against',
      value: (r) => (r.config.key === 'tcp' ? '' : (base(r)?.config.title ?? '')),
    },
  ];
}

export interface PingRow {
  point: Point;
  tcp: Stat;
  crtcp: Stat;
  /** CPU time of both ranks per round trip (ns), per column. */
  tcpCpu: Stat;
  crtcpCpu: Stat;
}

export function pingColumns(): Column<PingRow>[] {
  return [
    { title: 'size', value: (r) => formatSize(r.point.size) },
    { title: 'tcp us', value: (r) => r.tcp.median / 1000, digits: 1 },
    { title: 'crtcp us', value: (r) => r.crtcp.median / 1000, digits: 1 },
    { title: 'tcp GB/s', value: (r) => r.point.size / r.tcp.median, digits: 3 },
    { title: 'crtcp GB/s', value: (r) => r.point.size / r.crtcp.median, digits: 3 },
    { title: 'crtcp/tcp time', value: (r) => r.crtcp.median / r.tcp.median, digits: 3 },
    { title: 'slower %', value: (r) => overheadPct(r.crtcp, r.tcp), digits: 1 },
    // The fastest rounds: the least disturbed by other load on the machine.
    {
      title: 'min slower %',
      value: (r) => (100 * (r.crtcp.min - r.tcp.min)) / r.tcp.min,
      digits: 1,
    },
    // The work per message: what the module adds, hardly moved by other load (see the driver).
    { title: 'tcp cpu us/rt', value: (r) => r.tcpCpu.median / 1000, digits: 2 },
    { title: 'crtcp cpu us/rt', value: (r) => r.crtcpCpu.median / 1000, digits: 2 },
    { title: 'cpu more %', value: (r) => overheadPct(r.crtcpCpu, r.tcpCpu), digits: 1 },
  ];
}

// ---- running the jobs ---------------------------------------------------------------------

/** packages/cli/dist/bin/mpirun.js of this checkout, or a clear error. */
function mpirunPath(root: string): string {
  const p = join(root, '..', '..', 'packages', 'cli', 'dist', 'bin', 'mpirun.js');
  if (!existsSync(p)) throw new Error(`${p} is missing: build @ssi/cli (pnpm build)`);
  return p;
}

interface Ran {
  out: string;
  wallMs: number;
}

/**
 * Runs one job through the real mpirun, in a process group of its own (a kill reaches the ranks)
 * and a universe of its own: the session suffix names no running universe, so mpirun boots a
 * private one (which goes when mpirun goes) and never joins another user's or engineer's job.
 */
async function runMpirun(
  root: string,
  flags: string[],
  program: string[],
  opts: { cwd: string; timeoutMs: number; what: string; cpus?: [number, number] | null },
): Promise<Ran> {
  const mpiUrl = pathToFileURL(join(root, '..', '..', 'packages', 'mpi', 'dist', 'index.js')).href;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LAM_MPI_SESSION_SUFFIX: `bench-cr-${process.pid}`,
    SSI_BENCH_MPI_URL: mpiUrl,
  };
  delete env.SSI_BENCH_CPUS;
  const pin: string[] = [];
  if (opts.cpus) {
    env.SSI_BENCH_CPUS = opts.cpus.join(',');
    pin.push('-x', 'SSI_BENCH_CPUS');
  }
  const args = [mpirunPath(root), ...flags, '-x', 'SSI_BENCH_MPI_URL', ...pin, ...program];
  const t0 = nowNs();
  const child = spawn(process.execPath, args, {
    cwd: opts.cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const r = await runChild(child, opts.what, opts.timeoutMs, true);
  const wallMs = (nowNs() - t0) / 1e6;
  if (r.code !== 0)
    throw new Error(
      `${opts.what}: mpirun exited with ${r.code ?? r.signal}\n${(r.stdout + r.stderr).split('\n').slice(-30).join('\n')}`,
    );
  return { out: `${r.stdout}\n${r.stderr}`, wallMs };
}

const load = () => Number(loadavg()[0]!.toFixed(2));

/** 1-minute load average at the start and end of each part (the machine is shared). */
type LoadLog = Record<string, { start: number; end: number }>;

async function runPingpong(root: string, plan: CrPlan, ckpt: string, loads: LoadLog) {
  const cols = [TCP, CRTCP];
  const samples = new Map(cols.map((c) => [c.key, plan.points.map(() => [] as number[])]));
  const cpuSamples = new Map(cols.map((c) => [c.key, plan.points.map(() => [] as number[])]));
  const program = join(root, 'programs', 'pingpong-mpi.mjs');
  const poll = plan.pollUs === null ? [] : ['--ssi', 'mpi_base_poll_us', String(plan.pollUs)];
  loads.pingpong = { start: load(), end: 0 };
  for (let round = 0; round < plan.reps; round++) {
    for (const c of round % 2 ? [...cols].reverse() : cols) {
      const r = await runMpirun(
        root,
        [...mpirunFlags(2, c, ckpt), ...poll],
        [program, ...driverArgs(1, plan.points)],
        {
          cwd: root,
          timeoutMs: 600_000,
          what: `ping-pong over ${c.title}`,
          cpus: plan.cpus,
        },
      );
      const got = parseDriverOutput(r.out.split('\n').map(stripRank).join('\n'), plan.points, 1);
      got.forEach((s, i) => {
        samples.get(c.key)![i]!.push(s.oneWayNs[0]!);
        if (s.cpuNs === undefined)
          throw new Error(`${program} printed no cpuNs: rebuild the bench`);
        cpuSamples.get(c.key)![i]!.push(s.cpuNs[0]!);
      });
      const first = got[0]!;
      process.stderr.write(
        `round ${round + 1}/${plan.reps} pingpong ${c.title.padEnd(14)} ${formatSize(first.size)}: ` +
          `${(first.oneWayNs[0]! / 1000).toFixed(1)} us (load ${load()})\n`,
      );
    }
  }
  loads.pingpong.end = load();
  return plan.points.map((point, i) => ({
    point,
    tcp: stat(samples.get('tcp')![i]!),
    crtcp: stat(samples.get('crtcp')![i]!),
    tcpCpu: stat(cpuSamples.get('tcp')![i]!),
    crtcpCpu: stat(cpuSamples.get('crtcp')![i]!),
  }));
}

async function runHeat(root: string, plan: CrPlan, ckpt: string, loads: LoadLog) {
  const examples = join(root, '..', '..', 'examples');
  const cols = plan.heatColumns;
  const runs = new Map(cols.map((c) => [c.key, [] as (HeatRun & { wallMs: number })[]]));
  loads.heat = { start: load(), end: 0 };
  for (let round = 0; round < plan.reps; round++) {
    const order = cols.map((_, i) => cols[(i + round) % cols.length]!);
    for (const c of order) {
      const r = await runMpirun(
        root,
        mpirunFlags(plan.heatNp, c, ckpt),
        ['heat.ts', ...plan.heatArgs],
        {
          cwd: examples,
          timeoutMs: 600_000,
          what: `heat.ts over ${c.title}`,
        },
      );
      const h = parseHeatOutput(r.out);
      if (c.interval > 0 && h.checkpoints === 0)
        throw new Error(
          `heat.ts with ${c.title}: no checkpoint was taken in ${h.seconds} s (${h.notTaken.join('; ') || 'none refused'}): give heat more work (--heat-args)`,
        );
      runs.get(c.key)!.push({ ...h, wallMs: r.wallMs });
      process.stderr.write(
        `round ${round + 1}/${plan.reps} heat ${c.title.padEnd(16)} ${h.seconds.toFixed(2)} s, ` +
          `${h.checkpoints} checkpoint(s) (load ${load()})\n`,
      );
    }
  }
  loads.heat.end = load();
  const probes = new Set([...runs.values()].flat().map((h) => h.probe));
  if (probes.size !== 1)
    throw new Error(`heat.ts gave different answers across runs: ${[...probes].join(', ')}`);
  const rows: HeatRow[] = cols.map((c) => {
    const rs = runs.get(c.key)!;
    return {
      config: c,
      seconds: stat(rs.map((h) => h.seconds)),
      wallMs: stat(rs.map((h) => h.wallMs)),
      checkpoints: stat(rs.map((h) => h.checkpoints)),
    };
  });
  return { rows, runs: Object.fromEntries(runs) };
}

async function runCoord(root: string, plan: CrPlan, ckpt: string, loads: LoadLog) {
  const program = join(root, 'programs', 'cr-coord.mjs');
  const rows: CoordRow[] = [];
  const samples: CoordSample[] = [];
  loads.coord = { start: load(), end: 0 };
  for (const np of plan.nps) {
    const r = await runMpirun(
      root,
      mpirunFlags(np, CRTCP, ckpt),
      [program, String(plan.warmupCheckpoints), String(plan.checkpoints)],
      { cwd: root, timeoutMs: 600_000, what: `${plan.checkpoints} checkpoints of ${np} rank(s)` },
    );
    const s = parseCoordOutput(r.out, np, plan.checkpoints);
    samples.push(s);
    const row = coordRow(s);
    rows.push(row);
    process.stderr.write(
      `coord np ${np}: median ${row.ms.median.toFixed(1)} ms (prepare ${row.phases.prepareMs.median.toFixed(1)}, ` +
        `drain+save ${row.phases.savedMs.median.toFixed(1)}, commit ${row.phases.commitMs.median.toFixed(1)}) (load ${load()})\n`,
    );
  }
  loads.coord.end = load();
  return { rows, samples };
}

// ---- the command --------------------------------------------------------------------------

function printLoads(loads: LoadLog): void {
  const parts = Object.entries(loads).map(([p, l]) => `${p} ${l.start} -> ${l.end}`);
  console.log(`\nMachine load (1-min average, start -> end of each part): ${parts.join('; ')}`);
}

export const crCommand: BenchCommand = {
  name: 'cr',
  summary:
    'checkpoint/restart: crtcp+cr self vs tcp, coordination time vs ranks, periodic checkpoints',
  usage: USAGE,
  async run(args) {
    const plan = planCr(args);
    const root = benchRoot();
    mpirunPath(root);
    return withDriverWorkDir('ssi-bench-cr-', 'the checkpoint benchmark', async (workDir) => {
      const ckpt = mkdtempSync(join(workDir, 'checkpoints-'));
      const loads: LoadLog = {};
      const result: Record<string, unknown> = {};
      const t0 = nowNs();
      console.log(`cr benchmark: parts ${plan.parts.join(', ')}; load at start ${load()}`);
      if (plan.parts.includes('pingpong')) {
        const rows = await runPingpong(root, plan, ckpt, loads);
        console.log(
          `\nPing-pong, 2 ranks: one-way time and bandwidth (median of ${plan.reps} rounds; ${plan.cpus ? `ranks pinned to CPUs ${plan.cpus.join(',')}` : 'not pinned'}; ` +
            `${plan.pollUs === null ? 'polling as each rank chose' : `mpi_base_poll_us ${plan.pollUs}`}; cpu: both ranks' CPU time per round trip)\n`,
        );
        console.log(formatTable(pingColumns(), rows));
        result.pingpong = rows.map((r) => ({
          ...r.point,
          oneWayNs: { tcp: r.tcp, crtcp: r.crtcp },
          crtcpOverTcp: r.crtcp.median / r.tcp.median,
          cpuNsPerRoundTrip: { tcp: r.tcpCpu, crtcp: r.crtcpCpu },
          crtcpOverTcpCpu: r.crtcpCpu.median / r.tcpCpu.median,
        }));
      }
      if (plan.heatColumns.length > 0) {
        const { rows, runs } = await runHeat(root, plan, ckpt, loads);
        console.log(
          `\nheat.ts ${plan.heatArgs.join(' ')} on ${plan.heatNp} ranks: its own time (median of ${plan.reps} rounds)\n`,
        );
        console.log(formatTable(heatColumns(rows), rows));
        result.heat = { rows, runs };
      }
      if (plan.parts.includes('coord')) {
        const { rows, samples } = await runCoord(root, plan, ckpt, loads);
        const fit = linearFit(
          rows.map((r) => r.np),
          rows.map((r) => r.phases.prepareMs.median + r.phases.savedMs.median),
        );
        console.log(
          `\nCoordination time of one checkpoint (median of ${plan.checkpoints}; coord = prepare + drain+save, ` +
            `request to every rank saved; total adds the commit), ms\n`,
        );
        console.log(formatTable(coordColumns(), rows));
        console.log(
          `\nfit: coord = ${fit.intercept.toFixed(1)} ms + ${fit.slope.toFixed(1)} ms per rank ` +
            '(target 50 ms + 2 ms per rank; the seed: 114 ms + 9 ms per rank)',
        );
        result.coord = { rows, samples, fit };
      }
      if (plan.parts.includes('plans')) {
        const p = plan.plansPart;
        loads.plans = { start: load(), end: 0 };
        const rows = await runPlans(
          {
            ...p,
            reps: plan.reps,
            program: join(root, 'programs', 'cr-plans.mjs'),
            checkpointRoot: mkdtempSync(join(workDir, 'plans-')),
            secondRoot: mkdtempSync(join(workDir, 'fileserver-')),
          },
          (flags, program, what) =>
            runMpirun(root, flags, program, { cwd: root, timeoutMs: 900_000, what }),
          (line) => process.stderr.write(`${line} (load ${load()})\n`),
        );
        loads.plans.end = load();
        console.log(
          `\nStorage plans, ${p.np} ranks (median of ${plan.reps} x ${p.checkpoints} checkpoints; complete = request to a ` +
            'complete series, held = the longest a rank waited from its onCheckpoint to its onContinue; bytes per checkpoint)\n',
        );
        console.log(formatTable(planColumns(), rows));
        result.plans = { options: p, rows };
      }
      printLoads(loads);
      console.log(`measured in ${((nowNs() - t0) / 1e9).toFixed(0)} s`);
      const file = writeResults('cr', {
        params: { ...plan, heatColumns: plan.heatColumns.map((c) => c.key) },
        loads,
        source: sourceState(root, [
          'packages/mpi',
          'plugins/rpi-tcp',
          'plugins/rpi-crtcp',
          'plugins/cr-self',
        ]),
        unit: {
          oneWayNs: 'round trip / 2 in ns, one sample per round',
          cpuNsPerRoundTrip:
            'user + system CPU time of both ranks per round trip, ns, one sample per round',
          heat: 'seconds: heat.ts own MPI.wtime time; wallMs: mpirun spawn to exit (boots a private universe)',
          coord: 'ms of the outcome of mpi.cr.checkpoint(); phases in ms (see CheckpointPhases)',
          plans:
            'ms: request to complete series; heldMs: longest onCheckpoint→onContinue of a rank; bytes per checkpoint',
        },
        ...result,
      });
      console.log(`\nresults: ${file}`);
      return 0;
    });
  },
};
