import { availableParallelism } from 'node:os';
import {
  benchRoot,
  type MpiRunner,
  ompiRunner,
  sourceState,
  ssiRunner,
  withDriverWorkDir,
} from '../drivers';
import {
  type BenchCommand,
  type Column,
  formatTable,
  nowNs,
  Options,
  positiveNumbers,
  prefixedJson,
  resultLines,
  type Stat,
  stat,
  writeResults,
} from '../harness';
import { writeChartBeside } from '../svg-chart';
import { collPanels } from './coll-chart';

const USAGE = `usage: node tools/bench/dist/cli.js coll [options]

Collective operations on N processes of this machine, columns measured in the same run by the
same loop (a barrier, then many calls back to back, timed on every rank):
  ssi     @ssi/mpi with --ssi rpi tcp --ssi coll <module> (launchJob of @ssi/mpi/testing), one
          column per module of --coll (default lam_basic); ranks bound as mpirun binds them
          (--bind core: a CPU each when they fit on free CPUs, blocks of consecutive ranks per
          CPU when oversubscribed)
  ompi    Open MPI: tools/bench/c/coll.c compiled with mpicc, run with mpirun --mca pml ob1
          --mca btl tcp,self --mca btl_tcp_if_include lo (TCP on loopback), with Open MPI's
          default collective algorithms (its tuned module's decisions) and its default binding
          (core at np <= 2, none when oversubscribed); with --bind none, --bind-to none
Time per call = the slowest rank's mean over a timed pass (IMB's t_max); the tables show medians
over the repetitions and ssi/ompi (<module>/ompi with several modules) = ratio of the medians
(< 1: @ssi/mpi is faster).
Every driver run first makes unrecorded calls of each operation (4000 for barrier and allreduce8,
for the JIT of fresh Node processes; a quarter of a pass for the large ones), in both columns;
the Node driver's warm-up of a latency operation also lasts at least 500 ms (not with --quick);
before it, a rehearsal of up to 200 calls and the driver's own bcast and gather (see README).
Repetitions are interleaved: round r runs every column once for every process count.
More processes than CPUs oversubscribe the machine (8 on 2 CPUs): both columns alike; Open MPI's
ranks are not bound then, the ssi columns' are in blocks of consecutive ranks per CPU, as mpirun
binds them (a <module>/unblocked column: not bound either).

operations (--ops):
  barrier      MPI_Barrier / comm.barrier()
  bcast8       8 B of bytes from rank 0 / comm.bcast(buf, 0)
  bcast        4 MiB of bytes from rank 0
  allreduce8   8 B = 2 float32, SUM / comm.allreduce(f32, SUM, into)
  allreduce2k  2 KiB = 512 float32, SUM
  allreduce4m  4 MiB = 1 Mi float32, SUM
  reduce4m     4 MiB = 1 Mi float32, SUM to rank 0 / comm.reduce(f32, SUM, 0, into)
  alltoall8    8 B per pair / comm.alltoall(buf, into)
  alltoall     1 MiB per pair (np MiB sent and received per rank)
  allgather1k  1 KiB per rank / comm.allgather(buf, into)
  allgather64k 64 KiB per rank
  allgather1m  1 MiB per rank
  reducescatter8   8 B = 2 float32 per rank, SUM / comm.reduceScatter(f32, counts, SUM, into)
                   (MPI_Reduce_scatter_block)
  reducescatter1m  1 MiB of float32 per rank
  scan8        8 B = 2 float32, SUM / comm.scan(f32, SUM, into)
  scan1m       1 MiB of float32
  crossover points for tuned's thresholds: bcast64k, allreduce64k, alltoall1k, alltoall64k
  sendrecv1m   not a collective: 1 MiB to rank + 1 while 1 MiB comes from rank - 1
               / comm.sendrecv (MPI_Sendrecv): the exchange alltoall 1 MiB makes on 2 ranks

options:
  --reps N       repetitions (rounds) per point (default 5; the median is reported)
  --np LIST      process counts (default 2,4,8)
  --ops LIST     operations (default barrier,bcast,allreduce8,allreduce4m,alltoall; all: every
                 operation above)
  --coll LIST    coll modules of the ssi columns, one column each (default lam_basic; e.g.
                 tuned,lam_basic); <module>/nopoll: that module with --ssi mpi_base_poll_us 0
                 --ssi mpi_base_yield_every 0 (no polling while MPI waits, as before issue 18);
                 <module>/noyield: that module with --ssi mpi_base_poll_yield 0 (oversubscribed
                 ranks sleep at once when they wait instead of polling with yields);
                 <module>/unblocked: that module with its ranks unbound where they outnumber the
                 CPUs (mpirun's --ssi lam_bind_oversubscribed 0; default: blocks per CPU);
                 <module>:<param>=<value>[:...]: that module with --ssi coll_<module>_<param>
                 <value> (e.g. tuned:bcast_algorithm=binomial), one column per setting
  --only LIST    run only some of the columns: ssi,ompi (default both)
  --rpi tcp|sm   the ssi columns' rpi (default tcp); with sm, Open MPI runs with
                 --mca btl self,vader (shared memory) instead of TCP on loopback
  --nodes N      the ssi columns' ranks in N blocks on N loopback node addresses (127.0.0.2,
                 ...; default 1: one node), e.g. for hierarchical modules (--coll smp,lam_basic);
                 Open MPI always runs on one node
  --bind core|none  binding of both columns' ranks (default core: each launcher's default, a
                 core each where they fit; none: nothing bound, Open MPI with --bind-to none)
  --quick        a tenth of the iterations (a smoke run; numbers are noisier)`;

const KiB = 1024;
const MiB = 1024 * KiB;

/** What a driver runs: its operation name, and the bytes of one call. */
export type CollKind =
  | 'barrier'
  | 'bcast'
  | 'allreduce'
  | 'reduce'
  | 'alltoall'
  | 'allgather'
  | 'reducescatter'
  | 'scan'
  | 'sendrecv';

export interface CollOp {
  /** The name of `--ops`. */
  name: string;
  /** For tables. */
  label: string;
  kind: CollKind;
  /**
   * bcast: the message; allreduce: the float32 operand; alltoall: the block per pair; allgather:
   * the block per rank.
   */
  bytes: number;
  /** Calls per timed pass on 2 processes (fewer on more processes, see `iterations`). */
  calls: number;
  /** Shown in microseconds (latency) or milliseconds (large messages). */
  unit: 'us' | 'ms';
}

export const COLL_OPS: readonly CollOp[] = [
  { name: 'barrier', label: 'barrier', kind: 'barrier', bytes: 0, calls: 1000, unit: 'us' },
  { name: 'bcast8', label: 'bcast 8 B', kind: 'bcast', bytes: 8, calls: 1000, unit: 'us' },
  {
    name: 'bcast64k',
    label: 'bcast 64 KiB',
    kind: 'bcast',
    bytes: 64 * KiB,
    calls: 200,
    unit: 'us',
  },
  { name: 'bcast', label: 'bcast 4 MiB', kind: 'bcast', bytes: 4 * MiB, calls: 64, unit: 'ms' },
  {
    name: 'allreduce8',
    label: 'allreduce 8 B',
    kind: 'allreduce',
    bytes: 8,
    calls: 1000,
    unit: 'us',
  },
  {
    name: 'allreduce2k',
    label: 'allreduce 2 KiB',
    kind: 'allreduce',
    bytes: 2048,
    calls: 1000,
    unit: 'us',
  },
  {
    name: 'allreduce64k',
    label: 'allreduce 64 KiB',
    kind: 'allreduce',
    bytes: 64 * KiB,
    calls: 200,
    unit: 'us',
  },
  {
    name: 'allreduce4m',
    label: 'allreduce 4 MiB',
    kind: 'allreduce',
    bytes: 4 * MiB,
    calls: 32,
    unit: 'ms',
  },
  {
    name: 'reduce4m',
    label: 'reduce 4 MiB',
    kind: 'reduce',
    bytes: 4 * MiB,
    calls: 32,
    unit: 'ms',
  },
  {
    name: 'alltoall8',
    label: 'alltoall 8 B/pair',
    kind: 'alltoall',
    bytes: 8,
    calls: 1000,
    unit: 'us',
  },
  {
    name: 'alltoall1k',
    label: 'alltoall 1 KiB/pair',
    kind: 'alltoall',
    bytes: KiB,
    calls: 500,
    unit: 'us',
  },
  {
    name: 'alltoall64k',
    label: 'alltoall 64 KiB/pair',
    kind: 'alltoall',
    bytes: 64 * KiB,
    calls: 100,
    unit: 'us',
  },
  {
    name: 'alltoall',
    label: 'alltoall 1 MiB/pair',
    kind: 'alltoall',
    bytes: MiB,
    calls: 32,
    unit: 'ms',
  },
  {
    name: 'allgather1k',
    label: 'allgather 1 KiB',
    kind: 'allgather',
    bytes: 1024,
    calls: 1000,
    unit: 'us',
  },
  {
    name: 'allgather64k',
    label: 'allgather 64 KiB',
    kind: 'allgather',
    bytes: 64 * KiB,
    calls: 100,
    unit: 'us',
  },
  {
    name: 'allgather1m',
    label: 'allgather 1 MiB',
    kind: 'allgather',
    bytes: MiB,
    calls: 32,
    unit: 'ms',
  },
  {
    name: 'reducescatter8',
    label: 'reduce_scatter 8 B/rank',
    kind: 'reducescatter',
    bytes: 8,
    calls: 1000,
    unit: 'us',
  },
  {
    name: 'reducescatter1m',
    label: 'reduce_scatter 1 MiB/rank',
    kind: 'reducescatter',
    bytes: MiB,
    calls: 32,
    unit: 'ms',
  },
  { name: 'scan8', label: 'scan 8 B', kind: 'scan', bytes: 8, calls: 1000, unit: 'us' },
  { name: 'scan1m', label: 'scan 1 MiB', kind: 'scan', bytes: MiB, calls: 32, unit: 'ms' },
  // Not a collective: the point-to-point exchange that alltoall of 1 MiB per pair is on 2 ranks,
  // to tell the rpi's share of a collective from the algorithm's.
  {
    name: 'sendrecv1m',
    label: 'sendrecv 1 MiB (ring shift)',
    kind: 'sendrecv',
    bytes: MiB,
    calls: 32,
    unit: 'ms',
  },
];

/** `--ops` without the option: the operations of the first measurements (issue #13's table). */
export const DEFAULT_OPS = ['barrier', 'bcast', 'allreduce8', 'allreduce4m', 'alltoall'] as const;

/** The kinds of column `--only` selects, in table order. */
export const COLL_COLUMNS = ['ssi', 'ompi'] as const;
/** A column: `ssi:<coll module>` (one per module of `--coll`) or `ompi`. */
export type CollColumn = `ssi:${string}` | 'ompi';

export const ssiColumn = (module: string): CollColumn => `ssi:${module}`;
const moduleOf = (c: CollColumn) => c.slice('ssi:'.length);

export function columnTitle(c: CollColumn): string {
  return c === 'ompi' ? 'Open MPI' : `ssi ${moduleOf(c)}`;
}

/** `--nodes N` as launchJob's node addresses (127.0.0.2, ...), or undefined for one node. */
export function nodeAddresses(nodes: number): string[] | undefined {
  if (nodes <= 1) return undefined;
  return Array.from({ length: nodes }, (_, i) => `127.0.0.${i + 2}`);
}

const NOPOLL = '/nopoll';
const NOYIELD = '/noyield';
const UNBLOCKED = '/unblocked';

/**
 * A column's module spec: `<module>[/nopoll|/noyield|/unblocked][:<param>=<value>]...`, e.g.
 * `tuned:bcast_algorithm=binomial`. Each `<param>` is the module's own (`coll_<module>_<param>`),
 * so one run can set a module against itself with another algorithm forced.
 */
export const COLUMN_SPEC =
  /^[a-z][a-z0-9_]*(\/nopoll|\/noyield|\/unblocked)?(:[a-z][a-z0-9_]*=[A-Za-z0-9_.-]+)*$/;

/**
 * How a column's ranks are bound where they outnumber the CPUs: `<module>/unblocked` not at all
 * (as before lam_bind_oversubscribed), else in blocks per CPU, as mpirun binds them.
 */
export function oversubscribedBindingOf(spec: string): number | undefined {
  return spec.split(':')[0]!.endsWith(UNBLOCKED) ? 0 : undefined;
}

/** The SSI parameters of an ssi column (`--ssi rpi tcp --ssi coll <module>` and its settings). */
export function ssiParams(
  spec: string,
  rpi: 'tcp' | 'sm' = 'tcp',
): Record<string, string | number> {
  const [named, ...settings] = spec.split(':');
  const module = named!.replace(/\/.*$/, '');
  const params: Record<string, string | number> = { rpi, coll: module };
  // `<module>/nopoll`: the same module with the progress engine's polling and yields off (the
  // event loop sleeps at every wait, as before issue 18), to measure what polling gains.
  if (named!.endsWith(NOPOLL))
    Object.assign(params, { mpi_base_poll_us: 0, mpi_base_yield_every: 0 });
  // `<module>/noyield`: oversubscribed ranks sleep at once when they wait, as before their
  // polling gave the CPU away (mpi_base_poll_yield 0; the same as before where nothing shares).
  if (named!.endsWith(NOYIELD)) params.mpi_base_poll_yield = 0;
  for (const setting of settings) {
    const [name, value] = setting.split('=');
    params[`coll_${module}_${name}`] = value!;
  }
  return params;
}

/**
 * Calls per timed pass: the operation's count on 2 processes, scaled by 2/np (a call costs about
 * np times as much on this machine's 2 CPUs, so a pass takes similar time at every np), at least 4;
 * `--quick` takes a tenth (at least 2).
 */
export function iterations(op: CollOp, np: number, quick: boolean): number {
  const n = Math.max(4, Math.round((op.calls * 2) / Math.max(2, np)));
  return quick ? Math.max(2, Math.round(n / 10)) : n;
}

/**
 * Unrecorded calls before the timed passes of a point, in both columns alike: the JIT of a fresh
 * Node process needs thousands of calls to settle (2 processes: a barrier takes 3x longer over
 * calls 250-1250 than after 4000), so latency operations get 4000 at every np; the large ones,
 * where moving the data dominates, a quarter of a pass (at least 2). `--quick`: a tenth.
 */
export function warmupCalls(op: CollOp, iters: number, quick: boolean): number {
  if (op.unit === 'us') return quick ? 400 : 4000;
  return Math.max(2, Math.ceil(iters / 4));
}

/**
 * The latency operations' warm-up also lasts at least this long in the Node driver: V8 optimizes
 * after time as well as calls, and on a loaded machine the compiler thread gets little of it (2
 * bound ranks, load 24: a barrier took 100-200 us over the first 1500 calls, 25 us at 3500 and
 * settled at 7 us after 5500 calls, 330 ms; 50-100 us for good with --no-opt). The C driver
 * ignores it (no JIT).
 */
export function warmupMs(op: CollOp, quick: boolean): number {
  return op.unit === 'us' && !quick ? 500 : 0;
}

/** One operation at one process count. */
export interface CollPoint {
  op: CollOp;
  iters: number;
  warmup: number;
  /** Least warm-up time of the Node driver, ms (`warmupMs`). */
  warmupMs?: number;
}

export interface CollPlan {
  reps: number;
  quick: boolean;
  nps: number[];
  ops: CollOp[];
  columns: CollColumn[];
  /** The points each driver run measures, per process count (same order as `ops`). */
  points: Map<number, CollPoint[]>;
  /** `--nodes`: the ssi columns' ranks in blocks on this many loopback node addresses. */
  nodes: number;
  /** `--rpi`: the ssi columns' rpi; with sm, Open MPI runs over vader (shared memory). */
  rpi: 'tcp' | 'sm';
  /** `--bind`: both columns' ranks bound as their launcher does by default, or not at all. */
  bind: 'core' | 'none';
}

function list(o: Options, name: string, dflt: readonly string[]): string[] {
  const v = o.string(name, dflt.join(','));
  const xs = [...new Set(v.split(',').map((x) => x.trim()))].filter(Boolean);
  if (xs.length === 0) throw new Error(`--${name}: name at least one`);
  return xs;
}

export function planColl(args: string[]): CollPlan {
  const o = new Options(args);
  const bad = o.unknown(['reps', 'np', 'ops', 'only', 'coll', 'quick', 'rpi', 'nodes', 'bind']);
  if (bad.length > 0) throw new Error(`unknown option --${bad[0]}\n\n${USAGE}`);
  if (o.positional.length > 0)
    throw new Error(`unexpected argument "${o.positional[0]}"\n\n${USAGE}`);
  for (const name of ['np', 'ops', 'only', 'coll'])
    if (o.has(name) && o.string(name, '') === '')
      throw new Error(`--${name} needs a comma-separated list`);
  const rpi = o.string('rpi', 'tcp');
  if (rpi !== 'tcp' && rpi !== 'sm') throw new Error(`--rpi: tcp or sm, got "${rpi}"`);
  const bind = o.string('bind', 'core');
  if (bind !== 'core' && bind !== 'none') throw new Error(`--bind: core or none, got "${bind}"`);
  const nodes = o.number('nodes', 1);
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > 200)
    throw new Error(`--nodes: a number of nodes from 1 to 200, got "${o.string('nodes', '')}"`);
  const reps = o.number('reps', 5);
  if (!Number.isInteger(reps) || reps < 1) throw new Error('--reps needs an integer >= 1');
  const quick = o.has('quick');
  const nps = list(o, 'np', ['2', '4', '8']).map((x) => {
    if (!/^\d+$/.test(x) || Number(x) < 1) throw new Error(`--np: bad process count "${x}"`);
    return Number(x);
  });
  nps.sort((a, b) => a - b);
  let opNames = list(o, 'ops', DEFAULT_OPS);
  if (opNames.length === 1 && opNames[0] === 'all') opNames = COLL_OPS.map((x) => x.name);
  for (const n of opNames)
    if (!COLL_OPS.some((x) => x.name === n))
      throw new Error(`--ops: no operation "${n}" (choose from ${COLL_OPS.map((x) => x.name)})`);
  const ops = COLL_OPS.filter((x) => opNames.includes(x.name)); // table order
  const only = list(o, 'only', COLL_COLUMNS);
  for (const c of only)
    if (!(COLL_COLUMNS as readonly string[]).includes(c))
      throw new Error(`--only: no column "${c}" (choose from ${COLL_COLUMNS.join(',')})`);
  const modules = list(o, 'coll', ['lam_basic']);
  for (const m of modules)
    if (!COLUMN_SPEC.test(m))
      throw new Error(
        `--coll: "${m}" is not a coll module name, optionally with /nopoll, /noyield or /unblocked and :<param>=<value> settings (e.g. tuned,lam_basic,lam_basic/nopoll,tuned/unblocked,tuned:bcast_algorithm=binomial)`,
      );
  const columns: CollColumn[] = [
    ...(only.includes('ssi') ? modules.map(ssiColumn) : []),
    ...(only.includes('ompi') ? (['ompi'] as const) : []),
  ];
  const points = new Map(
    nps.map((np) => [
      np,
      ops.map((op) => {
        const iters = iterations(op, np, quick);
        return { op, iters, warmup: warmupCalls(op, iters, quick), warmupMs: warmupMs(op, quick) };
      }),
    ]),
  );
  return { rpi, nodes, reps, quick, nps, ops, columns, points, bind };
}

/**
 * The arguments both drivers take: `<reps> <kind>:<bytes>:<iters>:<warmup>[:<warmup ms>]...`
 * (the C driver reads the first four fields).
 */
export function driverArgs(reps: number, points: readonly CollPoint[]): string[] {
  const point = (p: CollPoint) =>
    `${p.op.kind}:${p.op.bytes}:${p.iters}:${p.warmup}${p.warmupMs ? `:${p.warmupMs}` : ''}`;
  return [String(reps), ...points.map(point)];
}

/**
 * Open MPI's mpirun flags: np ranks here, ob1 over the TCP BTL on loopback (or vader), bound as
 * Open MPI binds by default (`core`: no --bind-to given) or not at all.
 */
export function ompiFlags(
  np: number,
  sharedMemory = false,
  bind: 'core' | 'none' = 'none',
): string[] {
  const base = ['--allow-run-as-root', '--oversubscribe', '-np', String(np)];
  if (bind === 'none') base.push('--bind-to', 'none');
  if (sharedMemory) return [...base, '--mca', 'pml', 'ob1', '--mca', 'btl', 'self,vader'];
  return [
    ...base,
    '--mca',
    'pml',
    'ob1',
    '--mca',
    'btl',
    'tcp,self',
    '--mca',
    'btl_tcp_if_include',
    'lo',
  ];
}

/** One result line of a driver: per repetition the slowest, mean and fastest rank's time per call. */
export interface CollSample {
  op: CollKind;
  bytes: number;
  np: number;
  iters: number;
  maxNs: number[];
  avgNs: number[];
  minNs: number[];
}

const PREFIX = 'COLL ';
const INFO_PREFIX = 'COLLINFO ';
const KINDS: readonly string[] = [
  'barrier',
  'bcast',
  'allreduce',
  'reduce',
  'alltoall',
  'allgather',
  'reducescatter',
  'scan',
  'sendrecv',
];

/**
 * Parses one line a driver prints (`COLL {"op":...,"maxNs":[...],...}`); any other line (mpirun's
 * warnings, COLLINFO) gives undefined. A COLL line that is not well formed throws.
 */
export function parseDriverLine(line: string): CollSample | undefined {
  const o = prefixedJson(line, PREFIX) as Partial<CollSample> | undefined;
  if (o === undefined) return undefined;
  const ok =
    typeof o.op === 'string' &&
    KINDS.includes(o.op) &&
    Number.isInteger(o.bytes) &&
    o.bytes! >= 0 &&
    Number.isInteger(o.np) &&
    o.np! >= 1 &&
    Number.isInteger(o.iters) &&
    o.iters! > 0 &&
    positiveNumbers(o.maxNs) &&
    positiveNumbers(o.avgNs) &&
    positiveNumbers(o.minNs) &&
    o.maxNs.length === o.avgNs.length &&
    o.maxNs.length === o.minNs.length;
  if (!ok) throw new Error(`malformed driver line: ${line.trim()}`);
  const { op, bytes, np, iters, maxNs, avgNs, minNs } = o as CollSample;
  return { op, bytes, np, iters, maxNs, avgNs, minNs };
}

/**
 * Parses a driver's whole output and checks it against the plan: exactly one result line per
 * point, in order, for `np` processes, with the planned iterations and `reps` samples.
 */
export function parseDriverOutput(
  text: string,
  points: readonly CollPoint[],
  np: number,
  reps: number,
): CollSample[] {
  return resultLines(text, parseDriverLine, points.length, (s, i) => {
    const p = points[i]!;
    const want = `${p.op.kind}:${p.op.bytes}:${p.iters} on ${np}`;
    const got = `${s.op}:${s.bytes}:${s.iters} on ${s.np}`;
    if (want !== got) return `expected ${want}, got ${got}`;
    if (s.maxNs.length !== reps) return `expected ${reps} samples, got ${s.maxNs.length}`;
    return undefined;
  });
}

/**
 * The C driver's `COLLINFO {"yieldWhenIdle":Y}`: whether Open MPI's idle ranks yielded the CPU
 * (true/false), or undefined when the line is missing or the variable could not be read (-1).
 */
export function parseYieldWhenIdle(text: string): boolean | undefined {
  const line = text.split('\n').find((l) => l.trim().startsWith(INFO_PREFIX));
  if (!line) return undefined;
  try {
    const y = (JSON.parse(line.trim().slice(INFO_PREFIX.length)) as { yieldWhenIdle?: unknown })
      .yieldWhenIdle;
    return y === 1 ? true : y === 0 ? false : undefined;
  } catch {
    return undefined;
  }
}

// ---- results ------------------------------------------------------------------------------

/** One table row: an operation at one process count, per column the per-round t_max. */
export interface CollRow {
  op: CollOp;
  np: number;
  iters: number;
  warmup: number;
  times: Partial<Record<CollColumn, Stat>>;
}

const ratio = (a?: Stat, b?: Stat) => (a && b ? a.median / b.median : null);

/** The ssi columns of a table, and the title of each one's ratio to Open MPI. */
function ratioTitles(columns: readonly CollColumn[]): [CollColumn, string][] {
  const ssi = columns.filter((c) => c !== 'ompi');
  return ssi.map((c) => [c, ssi.length === 1 ? 'ssi/ompi' : `${moduleOf(c)}/ompi`]);
}

/** Columns of one table: times in the unit given (medians of t_max), then ssi/ompi per module. */
export function timeColumns(columns: CollColumn[], unit: 'us' | 'ms'): Column<CollRow>[] {
  const div = unit === 'us' ? 1e3 : 1e6;
  const cols: Column<CollRow>[] = [
    { title: 'operation', value: (r) => r.op.label },
    { title: 'np', value: (r) => r.np, digits: 0 },
  ];
  for (const c of columns)
    cols.push({
      title: columnTitle(c),
      value: (r) => (r.times[c] ? r.times[c]!.median / div : null),
      digits: unit === 'us' ? 1 : 2,
    });
  if (columns.includes('ompi'))
    for (const [c, title] of ratioTitles(columns))
      cols.push({ title, value: (r) => ratio(r.times[c], r.times.ompi) });
  return cols;
}

/**
 * The summary: one row per operation, per process count one ratio column to Open MPI per ssi
 * column (`np 2` alone for one module, `np 2 tuned`, `np 2 lam_basic` for several).
 */
export function ratioColumns(
  nps: number[],
  columns: readonly CollColumn[] = [ssiColumn('lam_basic'), 'ompi'],
): Column<{ op: CollOp; rows: CollRow[] }>[] {
  const ssi = columns.filter((c) => c !== 'ompi');
  return [
    { title: 'operation', value: (x) => x.op.label },
    ...nps.flatMap((np) =>
      ssi.map((c) => ({
        title: ssi.length === 1 ? `np ${np}` : `np ${np} ${moduleOf(c)}`,
        value: (x: { op: CollOp; rows: CollRow[] }) => {
          const r = x.rows.find((y) => y.np === np);
          return r ? ratio(r.times[c], r.times.ompi) : null;
        },
      })),
    ),
  ];
}

// ---- running the drivers ------------------------------------------------------------------

function formatNs(ns: number): string {
  return ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(1)} us`;
}

// ---- the command --------------------------------------------------------------------------

export const collCommand: BenchCommand = {
  name: 'coll',
  summary:
    'collectives on 2-8 processes: @ssi/mpi (tcp rpi, coll modules of --coll) vs Open MPI (TCP, loopback)',
  usage: USAGE,
  async run(args) {
    const plan = planColl(args);
    const { reps, nps, ops } = plan;
    const root = benchRoot();
    const runners: Partial<Record<CollColumn, MpiRunner>> = {};
    const info: Record<string, unknown> = {};
    const skipped: Record<string, string> = {};
    return withDriverWorkDir('ssi-bench-coll-', "the benchmark's processes", async (workDir) => {
      for (const c of plan.columns) {
        if (c !== 'ompi') {
          const t = await ssiRunner(
            root,
            'coll-mpi.mjs',
            ssiParams(moduleOf(c), plan.rpi),
            {},
            nodeAddresses(plan.nodes),
            plan.bind,
            oversubscribedBindingOf(moduleOf(c)),
          );
          runners[c] = t.run;
          info[c] = t.info;
        } else {
          process.stderr.write('compiling c/coll.c with mpicc ...\n');
          const flags = (np: number) => ompiFlags(np, plan.rpi === 'sm', plan.bind);
          const t = ompiRunner(root, 'coll', workDir, flags);
          if ('skip' in t) {
            skipped.ompi = t.skip;
            process.stderr.write(`Open MPI column skipped: ${t.skip}\n`);
          } else {
            runners.ompi = t.run;
            info.ompi = {
              ...t.info,
              flags: flags(0).join(' ').replace('-np 0', '-np <np>'),
              collectives: "Open MPI's defaults (no coll MCA parameters given)",
            };
          }
        }
      }
      const columns = plan.columns.filter((c) => runners[c]);
      if (columns.length === 0) throw new Error('no column left to run');
      /** samples[np][column][op index]: per round t_max, t_avg, t_min */
      const key = (np: number, c: CollColumn) => `${np}/${c}`;
      const samples = new Map<string, { max: number[]; avg: number[]; min: number[] }[]>();
      for (const np of nps)
        for (const c of columns)
          samples.set(
            key(np, c),
            ops.map(() => ({ max: [], avg: [], min: [] })),
          );
      const yieldWhenIdle: Record<number, boolean | undefined> = {};
      const runSeconds: Record<string, number[]> = {};
      const t0 = nowNs();
      for (let round = 0; round < reps; round++) {
        for (const np of nps) {
          const points = plan.points.get(np)!;
          const oneArgs = driverArgs(1, points);
          // rotate the order, so that no column always runs first
          const order = columns.map((_, i) => columns[(i + round) % columns.length]!);
          for (const c of order) {
            const started = nowNs();
            const text = await runners[c]!(np, oneArgs, 600_000);
            const got = parseDriverOutput(text, points, np, 1);
            if (c === 'ompi') yieldWhenIdle[np] = parseYieldWhenIdle(text);
            const s = samples.get(key(np, c))!;
            got.forEach((g, i) => {
              s[i]!.max.push(g.maxNs[0]!);
              s[i]!.avg.push(g.avgNs[0]!);
              s[i]!.min.push(g.minNs[0]!);
            });
            const secs = (nowNs() - started) / 1e9;
            runSeconds[key(np, c)] = [...(runSeconds[key(np, c)] ?? []), secs];
            process.stderr.write(
              `round ${round + 1}/${reps} np ${String(np).padStart(2)} ${columnTitle(c).padEnd(13)} ` +
                `${secs.toFixed(1).padStart(5)} s ` +
                got.map((g, i) => ` ${ops[i]!.name} ${formatNs(g.maxNs[0]!)}`).join('') +
                '\n',
            );
          }
        }
      }
      process.stderr.write(`measured in ${((nowNs() - t0) / 1e9).toFixed(0)} s\n`);

      const rows: CollRow[] = [];
      ops.forEach((op, i) => {
        for (const np of nps) {
          const { iters, warmup } = plan.points.get(np)![i]!;
          const row: CollRow = { op, np, iters, warmup, times: {} };
          for (const c of columns) row.times[c] = stat(samples.get(key(np, c))![i]!.max);
          rows.push(row);
        }
      });

      for (const [c, why] of Object.entries(skipped))
        console.log(`\n${columnTitle(c as CollColumn)} column skipped: ${why}`);
      console.log(
        `\nTime per call: the slowest rank's mean over a timed pass, median of ${reps} rounds` +
          `\n(ssi: --ssi rpi ${plan.rpi}${plan.nodes > 1 ? ` on ${plan.nodes} node addresses` : ''} --ssi coll ${columns
            .filter((c) => c !== 'ompi')
            .map(moduleOf)
            .join(
              ' / ',
            )}; Open MPI ${String(info.ompi ? (info.ompi as { version: string }).version : '-')}: ` +
          'ob1, tcp BTL on lo, default collectives)' +
          `\n(binding: ${plan.bind === 'core' ? `each launcher's default: ssi a CPU each where the ranks fit on free CPUs (oversubscribed: consecutive ranks in blocks, one per CPU; <module>/unblocked: none), Open MPI core at np <= 2 (none when oversubscribed)` : 'none in both columns (Open MPI --bind-to none)'})`,
      );
      const got = new Set(
        columns.flatMap((c) => ((info[c] as { bindings?: string[] })?.bindings ?? []) as string[]),
      );
      if (got.size > 0) console.log(`(ssi ranks got: ${[...got].join('; ')})`);
      const us = rows.filter((r) => r.op.unit === 'us');
      const ms = rows.filter((r) => r.op.unit === 'ms');
      if (us.length > 0) {
        console.log('\nLatency, microseconds per call\n');
        console.log(formatTable(timeColumns(columns, 'us'), us));
      }
      if (ms.length > 0) {
        console.log('\nLarge messages, milliseconds per call\n');
        console.log(formatTable(timeColumns(columns, 'ms'), ms));
      }
      if (columns.includes('ompi') && columns.length >= 2) {
        console.log('\nssi/ompi: ratio of the medians (< 1: @ssi/mpi faster)\n');
        console.log(
          formatTable(
            ratioColumns(nps, columns),
            ops.map((op) => ({ op, rows: rows.filter((r) => r.op === op) })),
          ),
        );
      }
      const cpus = availableParallelism(); // the CPUs this process may run on
      const over = nps.filter((np) => np > cpus);
      if (over.length > 0)
        console.log(
          `\n${over.join(', ')} processes on ${cpus} CPUs: oversubscribed in both columns` +
            (info.ompi
              ? `; Open MPI's idle ranks yield the CPU (mpi_yield_when_idle) at np ${
                  nps.filter((np) => yieldWhenIdle[np]).join(', ') || '-'
                }`
              : ''),
        );

      const file = writeResults('coll', {
        params: {
          reps,
          quick: plan.quick,
          np: nps,
          ops: ops.map((o) => o.name),
          columns: plan.columns,
          bind: plan.bind,
          interleaved:
            'round r runs, for every np, every column once (fresh processes); column order rotated each round',
          timing:
            'per point: an unrecorded rehearsal (up to 200 calls, the driver bcast and gather), an unrecorded pass of `warmup` calls, then a barrier and `iters` calls back to back timed on every rank; maxNs/avgNs/minNs = slowest/mean/fastest rank (t_max/t_avg/t_min)',
        },
        drivers: info,
        source: sourceState(root, [
          'packages/mpi',
          'plugins/rpi-tcp',
          'plugins/coll-lam-basic',
          'plugins/coll-tuned',
          'plugins/coll-smp',
          'plugins/rpi-sm',
        ]),
        skipped,
        openMpiYieldWhenIdle: yieldWhenIdle,
        runSeconds,
        unit: { ns: 'time per call in ns (median, min, max over rounds; samples: one per round)' },
        rows: rows.map((r) => {
          const i = ops.indexOf(r.op);
          const per = (c: CollColumn) => {
            const s = samples.get(key(r.np, c));
            return s
              ? { maxNs: stat(s[i]!.max), avgNs: stat(s[i]!.avg), minNs: stat(s[i]!.min) }
              : undefined;
          };
          return {
            op: r.op.name,
            kind: r.op.kind,
            bytes: r.op.bytes,
            np: r.np,
            iters: r.iters,
            warmup: r.warmup,
            ssi: Object.fromEntries(
              columns.filter((c) => c !== 'ompi').map((c) => [moduleOf(c), per(c)]),
            ),
            openMpi: per('ompi'),
            ssiOverOmpi: Object.fromEntries(
              columns
                .filter((c) => c !== 'ompi')
                .map((c) => [moduleOf(c), ratio(r.times[c], r.times.ompi)]),
            ),
          };
        }),
      });
      console.log(`\nresults: ${file}`);
      const panels = collPanels(rows, columns);
      if (panels.length > 0) console.log(`chart: ${writeChartBeside(file, panels)}`);
      return 0;
    });
  },
};
