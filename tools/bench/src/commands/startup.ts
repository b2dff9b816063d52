import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  benchRoot,
  type MpiRunner,
  ompiRunner,
  runChild,
  sourceState,
  withDriverWorkDir,
} from '../drivers';
import {
  type BenchCommand,
  type Column,
  formatTable,
  median,
  nowNs,
  Options,
  prefixedJson,
  resultLines,
  type Stat,
  stat,
  writeResults,
} from '../harness';

const USAGE = `usage: node tools/bench/dist/cli.js startup [options]

Start-up of whole jobs (issue #21, and #19's start-up section): the wall time of \`mpirun -np N\`
of a hello + allreduce program, from spawning mpirun to its exit, in one run against Open MPI:
  ompi       Open MPI's mpirun (--oversubscribe --bind-to none, its defaults otherwise) of
             c/startup.c compiled with mpicc
  mjs        this checkout's mpirun (packages/cli/dist/bin/mpirun.js) of programs/startup.mjs on
             the embedded default: no universe is running (a session suffix of its own), so
             mpirun boots a private one-node universe for each job and halts it afterwards; the
             rpi is the default one (sm on one node from 2 ranks on)
  ts         the same with programs/startup-ts.ts, the program's TypeScript twin (mpirun
             compiles it once for the job)
  ts-tsx     ts with SSI_MPIRUN_TS=tsx: tsx loaded in every rank (how .ts ran before)
  mjs-lazy   mjs with --ssi rpi tcp (connections on first use, tcp's default)
  mjs-eager  mjs with --ssi rpi tcp --ssi rpi_tcp_lazy 0 (the full mesh in MPI.init)
  mjs-nosnap mjs with --ssi mpi_base_startup_snapshot 0 (ranks start as plain node, not from
             mpirun's V8 start-up snapshot with the bundles loaded; not a default column)
Every rank reports its RSS at the end (process.memoryUsage().rss; /proc/self/statm in C).
First message (issue #21's target: first <= 2 x open + one TCP connect): for the .mjs columns,
jobs of --first-np ranks in which ranks 0 and 1, which have exchanged nothing since MPI.init,
time their first round trip (rank 0 sends 8 bytes, rank 1 answers; rank 0 starts 100 ms after
MPI.init, when rank 1 sits in its receive), one job per variant:
  named      rank 1's receive names rank 0. With mjs-lazy that receive dials rank 0 at once
             (rpi_tcp_recv_dial), so the connection is usually up before the timed send
  any        rank 1's receive is ANY_SOURCE: nothing dials before rank 0's send, so with mjs-lazy
             the connection set-up (dial, TCP or Unix connect, the 3-message authentication) is
             inside the timed round trip
  warm       (N >= 4 only) as any, after ranks 0 and 1 each completed a round trip with another
             rank right after MPI.init (0 sends to 2; 3 sends to 1): their send, receive and
             connection code ran once, so the first message costs what the protocol costs, not
             the first run of that code in the process
Columns of that table: first (that round trip), open (the median of 50 more on the open
connection), TCP connect (one raw connect + accept on loopback in rank 0), bound (2 x open +
TCP connect) and first / bound (<= 1 meets the target); then asleep (one more round trip on
the open connection after rank 0 waited 100 ms again, so rank 1 sleeps in its receive as it did
for the first: a message to a sleeping peer, with the code and the connection warm), first -
asleep (what the first use of the pair cost beyond waking a sleeping peer) and first / (2 x
asleep + connect): the target's bound with the open message taken in the first's conditions
(the peer asleep in its receive; open is a ping-pong of two ranks that never sleep). Every variant is a fresh job: the
first message of named and any runs cold code (the first send and receive of the process).
Rounds are interleaved: round r runs every column once per N, in an order rotated each round.
More ranks than CPUs oversubscribe the machine, every column alike.

options:
  --np LIST        rank counts (default 1,4,16,32,64)
  --reps N         rounds (default 3; medians)
  --only LIST      columns (default ompi,mjs,ts,ts-tsx,mjs-lazy,mjs-eager)
  --first-np LIST  rank counts of the first-message jobs (default 2,16; none: skip them)
  --timeout S      seconds one job may take before the run fails (default 300)`;

export const STARTUP_COLUMNS = [
  'ompi',
  'mjs',
  'ts',
  'ts-tsx',
  'mjs-lazy',
  'mjs-eager',
  'mjs-nosnap',
] as const;
export type StartupColumn = (typeof STARTUP_COLUMNS)[number];
const DEFAULT_COLUMNS: StartupColumn[] = ['ompi', 'mjs', 'ts', 'ts-tsx', 'mjs-lazy', 'mjs-eager'];

/** What an ssi column runs: the program file of programs/ and its --ssi settings. */
export const SSI_JOBS: Record<
  Exclude<StartupColumn, 'ompi'>,
  { program: string; ssi: string[]; env?: Record<string, string> }
> = {
  mjs: { program: 'startup.mjs', ssi: [] },
  ts: { program: 'startup-ts.ts', ssi: [] },
  'ts-tsx': { program: 'startup-ts.ts', ssi: [], env: { SSI_MPIRUN_TS: 'tsx' } },
  // tcp named: on one node sm would serve every pair and tcp's connections would not be measured.
  'mjs-lazy': { program: 'startup.mjs', ssi: ['rpi', 'tcp', 'rpi_tcp_lazy', '1'] },
  'mjs-eager': { program: 'startup.mjs', ssi: ['rpi', 'tcp', 'rpi_tcp_lazy', '0'] },
  'mjs-nosnap': { program: 'startup.mjs', ssi: ['mpi_base_startup_snapshot', '0'] },
};

export interface StartupPlan {
  nps: number[];
  reps: number;
  columns: StartupColumn[];
  firstNps: number[];
  timeoutMs: number;
}

function counts(o: Options, name: string, dflt: string): number[] {
  const v = o.string(name, dflt);
  if (v === 'none') return [];
  const xs = v.split(',').map((x) => {
    if (!/^\d+$/.test(x.trim()) || Number(x) < 1)
      throw new Error(`--${name}: bad rank count "${x}"`);
    return Number(x);
  });
  return [...new Set(xs)].sort((a, b) => a - b);
}

export function planStartup(args: string[]): StartupPlan {
  const o = new Options(args);
  const bad = o.unknown(['np', 'reps', 'only', 'first-np', 'timeout']);
  if (bad.length > 0) throw new Error(`unknown option --${bad[0]}\n\n${USAGE}`);
  if (o.positional.length > 0)
    throw new Error(`unexpected argument "${o.positional[0]}"\n\n${USAGE}`);
  const reps = o.number('reps', 3);
  if (!Number.isInteger(reps) || reps < 1) throw new Error('--reps needs an integer >= 1');
  const timeout = o.number('timeout', 300);
  if (!(timeout > 0)) throw new Error('--timeout needs seconds > 0');
  const only = o.string('only', DEFAULT_COLUMNS.join(',')).split(',');
  for (const c of only)
    if (!(STARTUP_COLUMNS as readonly string[]).includes(c))
      throw new Error(`--only: no column "${c}" (choose from ${STARTUP_COLUMNS.join(',')})`);
  const firstNps = counts(o, 'first-np', '2,16');
  if (firstNps.some((n) => n < 2))
    throw new Error('--first-np: the first message needs 2 ranks or more');
  return {
    nps: counts(o, 'np', '1,4,16,32,64'),
    reps,
    columns: STARTUP_COLUMNS.filter((c) => only.includes(c)),
    firstNps,
    timeoutMs: timeout * 1000,
  };
}

/** One rank's STARTUP line. */
export interface RankLine {
  rank: number;
  size: number;
  sum: number;
  rssKiB: number;
}

/** mpirun prefixes every line of rank r with `[r] `; the lines are read without it. */
const unprefixed = (line: string) => line.trim().replace(/^\[\d+\]\s*/, '');

export function parseStartupLine(line: string): RankLine | undefined {
  const o = prefixedJson(unprefixed(line), 'STARTUP ') as Partial<RankLine> | undefined;
  if (o === undefined) return undefined;
  const ok = [o.rank, o.size, o.sum, o.rssKiB].every((x) => Number.isInteger(x));
  if (!ok) throw new Error(`malformed STARTUP line: ${line.trim()}`);
  return o as RankLine;
}

/** A job's STARTUP lines: one per rank of `np`, each with the right allreduce sum. */
export function parseStartupOutput(text: string, np: number): RankLine[] {
  const lines = resultLines(text, parseStartupLine, np, (r) =>
    r.size !== np
      ? `size ${r.size}, expected ${np}`
      : r.sum !== (np * (np - 1)) / 2
        ? `rank ${r.rank}: allreduce sum ${r.sum}, expected ${(np * (np - 1)) / 2}`
        : r.rssKiB <= 0
          ? `rank ${r.rank}: no RSS`
          : undefined,
  );
  const ranks = new Set(lines.map((l) => l.rank));
  if (ranks.size !== np) throw new Error(`expected ranks 0..${np - 1}, got ${[...ranks].sort()}`);
  return lines;
}

/** The first-message jobs (see USAGE): which receive rank 1 waits in, and whether it is warm. */
export const FIRST_VARIANTS = ['named', 'any', 'warm'] as const;
export type FirstVariant = (typeof FIRST_VARIANTS)[number];

/** The variants a first-message job of `np` ranks runs (warm needs ranks 2 and 3). */
export function firstVariantsFor(np: number): FirstVariant[] {
  return FIRST_VARIANTS.filter((v) => v !== 'warm' || np >= 4);
}

/** Rank 0's FIRST line of a first-message job. */
export interface FirstLine {
  variant: FirstVariant;
  firstNs: number;
  openNs: number[];
  /** A round trip on the open connection after rank 1 slept in its receive again (see USAGE). */
  asleepNs: number;
  tcpConnectNs: number;
}

export function parseFirstOutput(text: string): FirstLine {
  const [f] = resultLines(
    text,
    (l) => prefixedJson(unprefixed(l), 'FIRST ') as Partial<FirstLine> | undefined,
    1,
    (o) =>
      (FIRST_VARIANTS as readonly unknown[]).includes(o.variant) &&
      typeof o.firstNs === 'number' &&
      o.firstNs > 0 &&
      Array.isArray(o.openNs) &&
      o.openNs.length > 0 &&
      typeof o.asleepNs === 'number' &&
      o.asleepNs > 0 &&
      typeof o.tcpConnectNs === 'number'
        ? undefined
        : 'malformed FIRST line',
  );
  return f as FirstLine;
}

/** packages/cli/dist/bin/mpirun.js of this checkout, or a clear error. */
function mpirunPath(root: string): string {
  const p = join(root, '..', '..', 'packages', 'cli', 'dist', 'bin', 'mpirun.js');
  if (!existsSync(p)) throw new Error(`${p} is missing: build @ssi/cli (pnpm build)`);
  return p;
}

let jobNo = 0;

/**
 * An ssi column: this checkout's mpirun of `program` with `ssi`, on the embedded default (a
 * session suffix no universe has, so mpirun boots and halts a private one; never another job's).
 */
function ssiRunner(
  root: string,
  program: string,
  ssi: string[],
  extraEnv: Record<string, string> = {},
): MpiRunner {
  const mpiUrl = pathToFileURL(join(root, '..', '..', 'packages', 'mpi', 'dist', 'index.js')).href;
  return async (np, args, timeoutMs) => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      LAM_MPI_SESSION_SUFFIX: `bench-startup-${process.pid}-${jobNo++}`,
      SSI_BENCH_MPI_URL: mpiUrl,
      ...extraEnv,
    };
    if (!extraEnv.SSI_MPIRUN_TS) delete env.SSI_MPIRUN_TS;
    const ssiFlags = [];
    for (let i = 0; i < ssi.length; i += 2) ssiFlags.push('--ssi', ssi[i]!, ssi[i + 1]!);
    const argv = [mpirunPath(root), '-np', String(np), ...ssiFlags, '-x', 'SSI_BENCH_MPI_URL'];
    const child = spawn(process.execPath, [...argv, join(root, 'programs', program), ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // a process group of its own: a kill reaches the ranks
    });
    const r = await runChild(child, `mpirun -np ${np} ${program}`, timeoutMs, true);
    if (r.code !== 0)
      throw new Error(
        `mpirun -np ${np} ${program} exited with ${r.code ?? r.signal}\n${(r.stdout + r.stderr).split('\n').slice(-30).join('\n')}`,
      );
    return r.stdout;
  };
}

export function ompiStartupFlags(np: number): string[] {
  return ['--allow-run-as-root', '--oversubscribe', '-np', String(np), '--bind-to', 'none'];
}

/** One table row: a column at one N. */
export interface StartupRow {
  np: number;
  column: StartupColumn;
  wallMs: Stat;
  /** Per round the median and the largest rank RSS (KiB). */
  rssMedianKiB: Stat;
  rssMaxKiB: Stat;
}

export function startupColumns(): Column<StartupRow & { ompiMs?: number; mjsMs?: number }>[] {
  return [
    { title: 'N', value: (r) => r.np, digits: 0 },
    { title: 'column', value: (r) => r.column },
    { title: 'wall ms', value: (r) => r.wallMs.median, digits: 0 },
    { title: 'min ms', value: (r) => r.wallMs.min, digits: 0 },
    { title: '/ompi', value: (r) => (r.ompiMs ? r.wallMs.median / r.ompiMs : null) },
    { title: '/mjs', value: (r) => (r.mjsMs ? r.wallMs.median / r.mjsMs : null) },
    { title: 'RSS MiB (median rank)', value: (r) => r.rssMedianKiB.median / 1024, digits: 1 },
    { title: 'RSS MiB (max rank)', value: (r) => r.rssMaxKiB.median / 1024, digits: 1 },
  ];
}

const load = () => Number(loadavg()[0]!.toFixed(2));

export const startupCommand: BenchCommand = {
  name: 'startup',
  summary: 'mpirun -np N of hello + allreduce (.mjs, .ts, lazy) vs Open MPI; RSS; first message',
  usage: USAGE,
  async run(args) {
    const plan = planStartup(args);
    const root = benchRoot();
    return withDriverWorkDir('ssi-bench-startup-', "the benchmark's jobs", async (workDir) => {
      const runners: Partial<Record<StartupColumn, MpiRunner>> = {};
      const skipped: Record<string, string> = {};
      const drivers: Record<string, unknown> = {};
      for (const c of plan.columns) {
        if (c === 'ompi') {
          process.stderr.write('compiling c/startup.c with mpicc ...\n');
          const t = ompiRunner(root, 'startup', workDir, ompiStartupFlags);
          if ('skip' in t) {
            skipped.ompi = t.skip;
            process.stderr.write(`Open MPI column skipped: ${t.skip}\n`);
          } else {
            runners.ompi = t.run;
            drivers.ompi = {
              ...t.info,
              flags: ompiStartupFlags(0).join(' ').replace('-np 0', '-np <N>'),
            };
          }
        } else {
          const j = SSI_JOBS[c];
          runners[c] = ssiRunner(root, j.program, j.ssi, j.env);
          drivers[c] = { mpirun: mpirunPath(root), program: j.program, ssi: j.ssi, env: j.env };
        }
      }
      const columns = plan.columns.filter((c) => runners[c]);
      const loads = { start: load(), end: 0 };
      const wall = new Map<string, number[]>();
      const rssMed = new Map<string, number[]>();
      const rssMax = new Map<string, number[]>();
      const key = (np: number, c: string) => `${np}/${c}`;
      const firstKey = (np: number, c: string, v: FirstVariant) => `${np}/${c}/${v}`;
      const push = (m: Map<string, number[]>, k: string, v: number) =>
        m.set(k, [...(m.get(k) ?? []), v]);
      const firstCols = columns.filter(
        (c) => c !== 'ompi' && SSI_JOBS[c].program === 'startup.mjs',
      );
      const first = new Map<string, FirstLine[]>();
      for (let round = 0; round < plan.reps; round++) {
        const order = columns.map((_, i) => columns[(i + round) % columns.length]!);
        for (const np of plan.nps)
          for (const c of order) {
            const t0 = nowNs();
            const out = await runners[c]!(np, ['hello'], plan.timeoutMs);
            const ms = (nowNs() - t0) / 1e6;
            const lines = parseStartupOutput(out, np);
            const rss = lines.map((l) => l.rssKiB);
            push(wall, key(np, c), ms);
            push(rssMed, key(np, c), median(rss));
            push(rssMax, key(np, c), Math.max(...rss));
            process.stderr.write(
              `round ${round + 1}/${plan.reps} N ${String(np).padStart(3)} ${c.padEnd(9)} ${ms.toFixed(0).padStart(6)} ms  RSS ${(median(rss) / 1024).toFixed(1)} MiB  load ${load()}\n`,
            );
          }
        for (const np of plan.firstNps)
          for (const c of firstCols)
            for (const v of firstVariantsFor(np)) {
              const out = await runners[c]!(np, ['first', '50', v], plan.timeoutMs);
              const f = parseFirstOutput(out);
              if (f.variant !== v) throw new Error(`first ${v}: the job says variant ${f.variant}`);
              first.set(firstKey(np, c, v), [...(first.get(firstKey(np, c, v)) ?? []), f]);
              process.stderr.write(
                `round ${round + 1}/${plan.reps} first message N ${np} ${c} ${v}: ${(f.firstNs / 1e3).toFixed(0)} us (open ${(median(f.openNs) / 1e3).toFixed(0)} us, asleep ${(f.asleepNs / 1e3).toFixed(0)} us, TCP connect ${(f.tcpConnectNs / 1e3).toFixed(0)} us)\n`,
              );
            }
      }
      loads.end = load();

      const rows: (StartupRow & { ompiMs?: number; mjsMs?: number })[] = [];
      for (const np of plan.nps)
        for (const c of columns) {
          const w = stat(wall.get(key(np, c))!);
          rows.push({
            np,
            column: c,
            wallMs: w,
            rssMedianKiB: stat(rssMed.get(key(np, c))!),
            rssMaxKiB: stat(rssMax.get(key(np, c))!),
            ompiMs: wall.has(key(np, 'ompi')) ? median(wall.get(key(np, 'ompi'))!) : undefined,
            mjsMs: wall.has(key(np, 'mjs')) ? median(wall.get(key(np, 'mjs'))!) : undefined,
          });
        }
      for (const [c, why] of Object.entries(skipped)) console.log(`\n${c} column skipped: ${why}`);
      console.log(
        `\nWall time of mpirun -np N (spawn to exit), median of ${plan.reps} rounds; /ompi, /mjs: ratios of the medians\n`,
      );
      console.log(formatTable(startupColumns(), rows));
      const firstRows = [...first.entries()].map(([k, fs]) => {
        const [np, c, variant] = k.split('/');
        const firstUs = median(fs.map((f) => f.firstNs)) / 1e3;
        const openUs = median(fs.map((f) => median(f.openNs))) / 1e3;
        const tcpUs = median(fs.map((f) => f.tcpConnectNs)) / 1e3;
        const asleepUs = median(fs.map((f) => f.asleepNs)) / 1e3;
        const bound = 2 * openUs + tcpUs;
        const row = { np: Number(np), column: c!, variant: variant!, firstUs, openUs, tcpUs };
        return { ...row, bound, asleepUs, asleepBound: 2 * asleepUs + tcpUs };
      });
      if (firstRows.length > 0) {
        console.log(
          '\nFirst message between ranks 0 and 1 (round trip, microseconds, medians; variants: see --help)\n',
        );
        console.log(
          formatTable(
            [
              { title: 'N', value: (r) => r.np, digits: 0 },
              { title: 'column', value: (r) => r.column },
              { title: 'variant', value: (r) => r.variant },
              { title: 'first', value: (r) => r.firstUs, digits: 0 },
              { title: 'open', value: (r) => r.openUs, digits: 0 },
              { title: 'TCP connect', value: (r) => r.tcpUs, digits: 0 },
              { title: '2 x open + connect', value: (r) => r.bound, digits: 0 },
              { title: 'first / bound', value: (r) => r.firstUs / r.bound },
              { title: 'asleep', value: (r) => r.asleepUs, digits: 0 },
              { title: 'first - asleep', value: (r) => r.firstUs - r.asleepUs, digits: 0 },
              { title: 'first / (2 x asleep + connect)', value: (r) => r.firstUs / r.asleepBound },
            ],
            firstRows,
          ),
        );
      }
      console.log(`\nload average (1 min): ${loads.start} at the start, ${loads.end} at the end`);
      const file = writeResults('startup', {
        params: plan,
        drivers,
        skipped,
        load: loads,
        source: sourceState(root, [
          'packages/cli',
          'packages/mpi',
          'packages/lam',
          'plugins/rpi-tcp',
        ]),
        unit: { wallMs: 'mpirun spawn to exit, ms', rss: 'KiB per rank at the end of the job' },
        rows: rows.map((r) => ({
          np: r.np,
          column: r.column,
          wallMs: r.wallMs,
          overOmpi: r.ompiMs ? r.wallMs.median / r.ompiMs : null,
          overMjs: r.mjsMs ? r.wallMs.median / r.mjsMs : null,
          rssMedianKiB: r.rssMedianKiB,
          rssMaxKiB: r.rssMaxKiB,
        })),
        firstMessage: firstRows,
      });
      console.log(`\nresults: ${file}`);
      return 0;
    });
  },
};
