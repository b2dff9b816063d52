import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  benchRoot,
  type MpiRunner,
  ompiRunner,
  runChild,
  sourceState,
  ssiRunner,
  track,
  which,
  withDriverWorkDir,
} from '../drivers';
import {
  type BenchCommand,
  type Column,
  formatSize,
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
import { pingpongPanels } from './pingpong-chart';

const USAGE = `usage: node tools/bench/dist/cli.js pingpong [options]

NetPIPE-style ping-pong between 2 processes on this machine (Ch. 5.3.2), columns measured in the
same run by the same loop (send, then receive into a preallocated buffer; the peer echoes):
  tcp     2 ranks of @ssi/mpi with --ssi rpi tcp (launchJob of @ssi/mpi/testing)
  nopoll  the same with --ssi mpi_base_poll_us 0 --ssi mpi_base_yield_every 0 --ssi rpi_tcp_unix 0:
          the tcp rpi as it was before the polling progress engine (every wait sleeps in the event
          loop, TCP between ranks of one node)
  inet    the tcp column with --ssi rpi_tcp_unix 0: polling, but TCP instead of a Unix socket
          between the two ranks (tcp/inet: what the Unix socket changes)
  noyield the tcp column with --ssi mpi_base_yield_every 0: no event-loop turn every 64 calls
          that complete at once (tcp/noyield: what the starvation fix costs)
  crtcp   the same with --ssi rpi crtcp: tcp able to checkpoint, no checkpoint taken (only with
          --rpi or --only; the crtcp/tcp columns give its cost over tcp)
  raw     baseline: a plain Node TCP socket over 127.0.0.1 (Nagle off) with the tcp rpi's framing
          (32-byte envelope + body) and reads (4 KiB after a pause, bodies of >= 16 KiB read
          straight into the preallocated buffer) and writes (one writev above 16 KiB)
  raw-unix
          the same loop over a Unix-domain socket (in the run's temporary directory) instead of
          TCP: the only difference is the socket family (the rpi_tcp_unix measurement)
          (SSI_BENCH_RAW_POLL=1 in the environment: both raw columns poll, their event loops
          kept busy with immediates instead of sleeping between messages)
  ompi    Open MPI: tools/bench/c/pingpong.c compiled with mpicc, run with
          mpirun --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo (TCP on loopback)
  sm, smspin, smblock
          with --rpi sm: 2 ranks with --ssi rpi sm and rpi_sm_wait hybrid / spin / block (one
          node: shared memory only); the ompi column then uses Open MPI's shared memory
          (--mca btl self,vader) and the targets are the sm rpi's
  paired  the --paired-sizes: the 2 MPI ranks also open the raw loop between themselves (over a
          Unix socket, as the rpi; polling with SSI_BENCH_RAW_POLL=1) and alternate blocks of
          round trips over the tcp rpi and over it; the ratio is the median over block pairs
The targets are checked against the best raw loop of the run at each size (raw, raw-unix or
paired, whichever the tcp rpi compares worst with; the line names it).
One-way time = round trip / 2; bandwidth = size / one-way time. Repetitions are interleaved:
round r runs every column once (round trips of 8 bytes for --warmup-ms to warm up the
processes, then per size a warm-up pass of a quarter of the iterations and a timed pass). In every column
process 0 runs on the first CPU of --cpus and process 1 on the second (taskset / sched_setaffinity).

options:
  --reps N          repetitions (rounds) per point (default 5; the median is reported)
  --lat-sizes LIST  latency sizes (default 0,8,64,1k)
  --bw-sizes LIST   bandwidth sizes (default 1k,4k,16k,64k,256k,1m,4m,16m)
  --rpi LIST        the rpi modules measured: tcp,crtcp,sm (default tcp). tcp: columns tcp,
                    nopoll,inet,noyield,raw,raw-unix,ompi,paired; crtcp: the same with crtcp (with tcp too: their ratio);
                    sm: smspin,smblock,sm,tcp,ompi with Open MPI over vader
  --only LIST       run only some of: smspin,smblock,sm,tcp,nopoll,inet,noyield,crtcp,raw,raw-unix,
                    ompi,paired
                    (default:
                    --rpi's)
  --paired-sizes L  sizes of the paired column, among the others (default 0,8,64,1k,256k)
  --prepost         MPI columns post each receive before the send it answers (NetPIPE's
                    asynchronous receive); the raw socket has no receive to post
  --blocks N        paired: blocks of each kind per size and round (default 10)
  --block-iters N   paired: round trips per block (default 200, 50 with --quick)
  --cpus A,B|none   pin process 0 to CPU A and process 1 to CPU B (default: the first two CPUs this
                    process may use; A = B puts both on one CPU; none: the scheduler decides)
  --warmup-ms N     round trips of 8 bytes before the first size, in every column, for at least N ms
                    (default 2000; at least 4000 of them): a fresh Node process runs its first
                    passes 2-20 times slower than later ones (the JIT), which a fixed 4000 did not
                    cover; the C program gets the same
  --quick           a tenth of the iterations (a smoke run; numbers are noisier)`;

/** The columns, in table order. */
export const PINGPONG_COLUMNS = [
  'smspin',
  'smblock',
  'sm',
  'tcp',
  'nopoll',
  'inet',
  'noyield',
  'crtcp',
  'raw',
  'raw-unix',
  'ompi',
  'paired',
] as const;
export type PingPongColumn = (typeof PINGPONG_COLUMNS)[number];

export const COLUMN_TITLES: Record<PingPongColumn, string> = {
  tcp: 'tcp rpi',
  nopoll: 'tcp nopoll',
  inet: 'tcp inet',
  noyield: 'tcp noyield',
  crtcp: 'crtcp rpi',
  raw: 'raw socket',
  'raw-unix': 'raw unix',
  ompi: 'Open MPI',
  paired: 'paired',
  sm: 'sm hybrid',
  smspin: 'sm spin',
  smblock: 'sm block',
};

/** The default columns of each `--rpi`. */
const RPI_COLUMNS: Record<'tcp' | 'crtcp' | 'sm', PingPongColumn[]> = {
  tcp: ['tcp', 'nopoll', 'inet', 'noyield', 'raw', 'raw-unix', 'ompi', 'paired'],
  crtcp: ['crtcp', 'raw', 'ompi', 'paired'],
  sm: ['smspin', 'smblock', 'sm', 'tcp', 'ompi'],
};

/** The tcp variants: `nopoll` is issue 18's "today" (no polling, no yields, TCP only). */
const VARIANT_PARAMS: Partial<Record<PingPongColumn, Record<string, string | number>>> = {
  nopoll: { rpi: 'tcp', mpi_base_poll_us: 0, mpi_base_yield_every: 0, rpi_tcp_unix: 0 },
  inet: { rpi: 'tcp', rpi_tcp_unix: 0 },
  noyield: { rpi: 'tcp', mpi_base_yield_every: 0 },
};

/** The sm columns' wait modes (`rpi_sm_wait`). */
const SM_WAIT: Partial<Record<PingPongColumn, string>> = {
  sm: 'hybrid',
  smspin: 'spin',
  smblock: 'block',
};

/** The columns with one series per size (paired gives two per latency size, see PairedStat). */
type SeriesColumn = Exclude<PingPongColumn, 'paired'>;

/**
 * Open MPI's mpirun flags: 2 ranks here, ob1 over the TCP BTL on the loopback interface. The ranks
 * pin themselves (SSI_BENCH_CPUS, exported with -x), so Open MPI binds nothing; two ranks on one
 * CPU must yield when idle (Open MPI busy-polls otherwise and each waits out the other's slice).
 */
export function ompiFlags(
  cpus: readonly number[] | null,
  prepost = false,
  sharedMemory = false,
): string[] {
  const flags = ['--allow-run-as-root', '--oversubscribe', '-np', '2', '--bind-to', 'none'];
  if (sharedMemory) flags.push('--mca', 'pml', 'ob1', '--mca', 'btl', 'self,vader');
  else
    flags.push(
      '--mca',
      'pml',
      'ob1',
      '--mca',
      'btl',
      'tcp,self',
      '--mca',
      'btl_tcp_if_include',
      'lo',
    );
  if (prepost) flags.push('-x', 'SSI_BENCH_PREPOST');
  if (cpus) {
    flags.push('-x', 'SSI_BENCH_CPUS');
    if (cpus[0] === cpus[1]) flags.push('--mca', 'mpi_yield_when_idle', '1');
  }
  return flags;
}

/** One message size: how many round trips a timed pass does. */
export interface Point {
  size: number;
  iters: number;
  latency: boolean;
  bandwidth: boolean;
}

export interface PingPongPlan {
  /** Which rpi the run is about (`--rpi`): its columns, Open MPI's transport and the targets. */
  rpi: 'tcp' | 'sm';
  reps: number;
  quick: boolean;
  latSizes: number[];
  bwSizes: number[];
  /** Sizes of the paired column. */
  pairedSizes: number[];
  /** MPI drivers post each receive before the send it answers. */
  prepost: boolean;
  columns: PingPongColumn[];
  /** Paired column: blocks of each kind per size and round, round trips per block. */
  blocks: number;
  blockIters: number;
  /** CPUs of process 0 and process 1, or null: not pinned. */
  cpus: [number, number] | null;
  /** Milliseconds of 8-byte round trips that warm up every column's processes first. */
  warmupMs: number;
  /** The union of both size lists, ascending, each measured once per column and round. */
  points: Point[];
}

const MiB = 1024 * 1024;

/**
 * Round trips per timed pass: 2000 for small messages (0.1-0.4 s at Node's loopback latency on
 * one or two CPUs), else enough for 128 MiB each way (about 0.1-0.2 s at 1-3 GB/s), at least 8.
 */
export function iterations(size: number, quick: boolean): number {
  const n = Math.min(2000, Math.max(8, Math.round((128 * MiB) / Math.max(1, size))));
  return quick ? Math.max(2, Math.round(n / 10)) : n;
}

/** "0-3,6" -> [0, 1, 2, 3, 6] (the format of Cpus_allowed_list in /proc/<pid>/status). */
export function parseCpuList(text: string): number[] {
  const out: number[] = [];
  for (const part of text.trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) throw new Error(`bad CPU list "${text}"`);
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    for (let c = a; c <= b; c++) out.push(c);
  }
  return out;
}

/** The CPUs this process may run on (Linux), or undefined when that cannot be read. */
export function allowedCpus(): number[] | undefined {
  try {
    const m = /^Cpus_allowed_list:\s*(.+)$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? parseCpuList(m[1]!) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `--cpus`: "A,B" pins process 0 to A and 1 to B; "none" pins nothing. The default (`allowed`:
 * the CPUs this process may use) takes the first two, or pins nothing on a single CPU.
 */
export function chooseCpus(
  option: string | undefined,
  allowed: number[] | undefined,
): [number, number] | null {
  if (option === 'none') return null;
  if (option === undefined) {
    if (allowed === undefined) return [0, 1];
    return allowed.length >= 2 ? [allowed[0]!, allowed[1]!] : null;
  }
  const xs = option.split(',').map((x) => (/^\d+$/.test(x.trim()) ? Number(x) : Number.NaN));
  if (xs.length !== 2 || xs.some((x) => Number.isNaN(x)))
    throw new Error(`--cpus needs two CPU numbers (A,B) or none, got "${option}"`);
  if (allowed !== undefined)
    for (const x of xs)
      if (!allowed.includes(x))
        throw new Error(`--cpus: CPU ${x} is not one this process may use (${allowed.join(',')})`);
  return [xs[0]!, xs[1]!];
}

export function planPingPong(args: string[], allowed = allowedCpus()): PingPongPlan {
  const o = new Options(args);
  const bad = o.unknown([
    'reps',
    'lat-sizes',
    'bw-sizes',
    'only',
    'cpus',
    'quick',
    'blocks',
    'block-iters',
    'paired-sizes',
    'prepost',
    'rpi',
    'warmup-ms',
  ]);
  if (bad.length > 0) throw new Error(`unknown option --${bad[0]}\n\n${USAGE}`);
  if (o.positional.length > 0)
    throw new Error(`unexpected argument "${o.positional[0]}"\n\n${USAGE}`);
  const reps = o.number('reps', 5);
  if (!Number.isInteger(reps) || reps < 1) throw new Error('--reps needs an integer >= 1');
  const quick = o.has('quick');
  const warmupMs = o.number('warmup-ms', quick ? 200 : 2000);
  if (!Number.isInteger(warmupMs) || warmupMs < 0)
    throw new Error('--warmup-ms needs an integer >= 0 (milliseconds)');
  const blocks = o.number('blocks', 10);
  if (!Number.isInteger(blocks) || blocks < 1) throw new Error('--blocks needs an integer >= 1');
  const blockIters = o.number('block-iters', quick ? 50 : 200);
  if (!Number.isInteger(blockIters) || blockIters < 1)
    throw new Error('--block-iters needs an integer >= 1');
  const latSizes = o.sizes('lat-sizes', [0, 8, 64, 1024]);
  const prepost = o.has('prepost');
  const bwSizes = o.sizes('bw-sizes', [
    1024,
    4096,
    16384,
    65536,
    256 * 1024,
    MiB,
    4 * MiB,
    16 * MiB,
  ]);
  const rpis = o.string('rpi', 'tcp').split(',').filter(Boolean);
  for (const r of rpis)
    if (!Object.hasOwn(RPI_COLUMNS, r))
      throw new Error(`--rpi: no rpi "${r}" (choose from ${Object.keys(RPI_COLUMNS).join(',')})`);
  if (rpis.length === 0) throw new Error('--rpi: name at least one rpi module');
  const rpi = rpis.includes('sm') ? 'sm' : 'tcp';
  const defaults = rpis.flatMap((r) => RPI_COLUMNS[r as keyof typeof RPI_COLUMNS]);
  const only = o
    .string('only', [...new Set(defaults)].join(','))
    .split(',')
    .filter(Boolean);
  for (const c of only)
    if (!(PINGPONG_COLUMNS as readonly string[]).includes(c))
      throw new Error(`--only: no column "${c}" (choose from ${PINGPONG_COLUMNS.join(',')})`);
  if (only.length === 0) throw new Error('--only: name at least one column');
  const columns = PINGPONG_COLUMNS.filter((c) => only.includes(c));
  const cpus = chooseCpus(o.has('cpus') ? o.string('cpus', '') : undefined, allowed);
  const sizes = [...new Set([...latSizes, ...bwSizes])].sort((a, b) => a - b);
  const pairedSizes = o.has('paired-sizes')
    ? o.sizes('paired-sizes', [])
    : [0, 8, 64, 1024, 256 * 1024].filter((x) => sizes.includes(x));
  for (const x of pairedSizes)
    if (!sizes.includes(x))
      throw new Error(`--paired-sizes: ${x} is not one of the latency or bandwidth sizes`);
  for (const s of sizes)
    if (!Number.isInteger(s) || s > 0xffffffff)
      throw new Error(`size ${s}: sizes are whole bytes below 4 GiB`);
  const points = sizes.map((size) => ({
    size,
    iters: iterations(size, quick),
    latency: latSizes.includes(size),
    bandwidth: bwSizes.includes(size),
  }));
  return {
    rpi,
    reps,
    quick,
    latSizes,
    bwSizes,
    pairedSizes,
    prepost,
    columns,
    blocks,
    blockIters,
    cpus,
    warmupMs,
    points,
  };
}

/** The arguments every driver takes: `<reps> <size>:<iters>...`. */
export function driverArgs(reps: number, points: readonly Point[]): string[] {
  return [String(reps), ...points.map((p) => `${p.size}:${p.iters}`)];
}

/** The paired mode's arguments: `paired <blocks> <block-iters> <size>...`. */
export function pairedArgs(plan: PingPongPlan): string[] {
  return ['paired', String(plan.blocks), String(plan.blockIters), ...plan.pairedSizes.map(String)];
}

/** One line of a driver's output. */
export interface DriverSample {
  size: number;
  iters: number;
  oneWayNs: number[];
  /** CPU time (user + system) of both ranks per round trip, ns, per repetition (MPI drivers). */
  cpuNs?: number[];
}

const PREFIX = 'PINGPONG ';

/**
 * Parses one line a driver prints (`PINGPONG {"size":S,"iters":I,"oneWayNs":[...]}`, the MPI
 * drivers also `"cpuNs":[...]`, one per sample); any other
 * line (a warning of mpirun, say) gives undefined. A PINGPONG line that is not well formed throws.
 */
export function parseDriverLine(line: string): DriverSample | undefined {
  const o = prefixedJson(line, PREFIX) as Partial<DriverSample> | undefined;
  if (o === undefined) return undefined;
  const ok =
    Number.isInteger(o.size) &&
    o.size! >= 0 &&
    Number.isInteger(o.iters) &&
    o.iters! > 0 &&
    positiveNumbers(o.oneWayNs) &&
    (o.cpuNs === undefined ||
      (Array.isArray(o.cpuNs) &&
        o.cpuNs.length === o.oneWayNs!.length &&
        o.cpuNs.every((x) => typeof x === 'number' && Number.isFinite(x) && x >= 0)));
  if (!ok) throw new Error(`malformed driver line: ${line.trim()}`);
  const sample: DriverSample = { size: o.size!, iters: o.iters!, oneWayNs: o.oneWayNs! };
  if (o.cpuNs !== undefined) sample.cpuNs = o.cpuNs;
  return sample;
}

/**
 * Parses a driver's whole output and checks it against the plan: exactly one sample line per
 * point, in order, with the planned iterations and `reps` samples.
 */
export function parseDriverOutput(
  text: string,
  points: readonly Point[],
  reps: number,
): DriverSample[] {
  return resultLines(text, parseDriverLine, points.length, (s, i) => {
    const p = points[i]!;
    if (s.size !== p.size || s.iters !== p.iters)
      return `expected ${p.size}:${p.iters}, got ${s.size}:${s.iters}`;
    if (s.oneWayNs.length !== reps) return `expected ${reps} samples, got ${s.oneWayNs.length}`;
    return undefined;
  });
}

/** One line of the paired mode: per block, the one-way ns over the tcp rpi and the raw socket. */
export interface PairedSample {
  size: number;
  blockIters: number;
  rpiNs: number[];
  rawNs: number[];
}

const PAIRED_PREFIX = 'PAIRED ';

/**
 * Parses the paired mode's output and checks it against the plan: one PAIRED line per paired
 * size, in order, each with `blocks` positive samples on both sides.
 */
export function parsePairedOutput(text: string, plan: PingPongPlan): PairedSample[] {
  const out: PairedSample[] = [];
  for (const line of text.split('\n')) {
    const v = prefixedJson(line, PAIRED_PREFIX) as Partial<PairedSample> | undefined;
    if (v === undefined) continue;
    const series = (x: unknown) => positiveNumbers(x) && x.length === plan.blocks;
    if (
      !Number.isInteger(v.size) ||
      v.blockIters !== plan.blockIters ||
      !series(v.rpiNs) ||
      !series(v.rawNs)
    )
      throw new Error(
        `malformed paired line (expected ${plan.blocks} blocks each): ${line.trim()}`,
      );
    out.push(v as PairedSample);
  }
  const sizes = out.map((s) => s.size).join(',');
  if (sizes !== plan.pairedSizes.join(','))
    throw new Error(`paired: expected sizes ${plan.pairedSizes.join(',')}, got "${sizes}"`);
  return out;
}

// ---- running the drivers ------------------------------------------------------------------

/** Waits for a line starting with `prefix` on a child's stdout. */
function firstLine(child: ChildProcess, prefix: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(
      () => reject(new Error(`no "${prefix}" line within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onData = (d: Buffer) => {
      buf += d.toString();
      const l = buf.split('\n').find((x) => x.startsWith(prefix));
      if (l !== undefined) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve(l.slice(prefix.length).trim());
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before printing "${prefix}"`));
    });
  });
}

/** How one column runs one round: resolves with the driver's stdout. */
type Runner = (args: string[], timeoutMs: number) => Promise<string>;

/** Ping-pong drivers always run 2 ranks. */
const twoRanks =
  (run: MpiRunner): Runner =>
  (args, timeoutMs) =>
    run(2, args, timeoutMs);

/**
 * What every driver gets: SSI_BENCH_CPUS set to the plan's CPUs (or removed) and
 * SSI_BENCH_WARMUP_MS.
 */
function cpuEnv(plan: PingPongPlan): Record<string, string> {
  const warmup = { SSI_BENCH_WARMUP_MS: String(plan.warmupMs) };
  return plan.cpus ? { SSI_BENCH_CPUS: plan.cpus.join(','), ...warmup } : warmup;
}

/** The MPI drivers' environment: the above, and SSI_BENCH_PREPOST=1 with --prepost. */
/**
 * The MPI drivers' environment (the test launcher passes no SSI_* variable of its own on):
 * placement, --prepost, and SSI_BENCH_RAW_POLL for the paired mode's raw blocks.
 */
function mpiEnv(plan: PingPongPlan): Record<string, string> {
  return {
    ...cpuEnv(plan),
    ...(plan.prepost ? { SSI_BENCH_PREPOST: '1' } : {}),
    ...(process.env.SSI_BENCH_RAW_POLL === '1' ? { SSI_BENCH_RAW_POLL: '1' } : {}),
  };
}

function envWith(plan: PingPongPlan): NodeJS.ProcessEnv {
  const env = { ...process.env, ...cpuEnv(plan) };
  if (!plan.cpus) delete env.SSI_BENCH_CPUS;
  return env;
}

/**
 * The raw socket columns: over TCP on 127.0.0.1, or with `unixDir` over a Unix-domain socket in
 * that directory (a fresh path per round: the run's own temporary directory, so concurrent runs
 * never share one).
 */
function rawRunner(
  root: string,
  maxSize: number,
  plan: PingPongPlan,
  unixDir?: string,
): { run: Runner; info: Record<string, unknown> } {
  const program = join(root, 'programs', 'pingpong-raw.mjs');
  let round = 0;
  const run: Runner = async (args, timeoutMs) => {
    const where = unixDir ? [join(unixDir, `raw-unix-${round++}.sock`)] : [];
    const echo = track(
      spawn(process.execPath, [program, 'echo', String(maxSize), ...where], {
        stdio: ['ignore', 'pipe', 'inherit'],
        env: envWith(plan),
      }),
    );
    try {
      const port = await firstLine(echo, 'PORT', 15_000);
      const ping = spawn(process.execPath, [program, 'ping', port, ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: envWith(plan),
      });
      const r = await runChild(ping, 'raw socket ping-pong', timeoutMs);
      if (r.code !== 0)
        throw new Error(`raw socket ping-pong exited with ${r.code ?? r.signal}\n${r.stderr}`);
      return r.stdout;
    } finally {
      // The echo side exits when the connection closes; make sure.
      if (echo.exitCode === null && echo.signalCode === null) {
        const gone = new Promise((res) => echo.once('exit', res));
        const t = setTimeout(() => echo.kill('SIGKILL'), 2000);
        await gone;
        clearTimeout(t);
      }
    }
  };
  return { run, info: { program, family: unixDir ? 'unix' : 'tcp' } };
}

// ---- results ------------------------------------------------------------------------------

/** The paired column at one size: both sides' block times and the ratio of each pair. */
export interface PairedStat {
  rpi: Stat;
  raw: Stat;
  /** rpi block time / the raw block measured next to it, over every pair. */
  ratio: Stat;
}

export function pairedStat(rpiNs: number[], rawNs: number[]): PairedStat {
  return {
    rpi: stat(rpiNs),
    raw: stat(rawNs),
    ratio: stat(rpiNs.map((x, i) => x / rawNs[i]!)),
  };
}

export interface PingPongRow {
  size: number;
  iters: number;
  latency: boolean;
  bandwidth: boolean;
  tcp?: Stat;
  nopoll?: Stat;
  inet?: Stat;
  noyield?: Stat;
  crtcp?: Stat;
  raw?: Stat;
  'raw-unix'?: Stat;
  ompi?: Stat;
  paired?: PairedStat;
  sm?: Stat;
  smspin?: Stat;
  smblock?: Stat;
}

const us = (s?: Stat) => (s ? s.median / 1000 : null);
const gbs = (size: number, s?: Stat) => (s ? size / s.median : null);
const ratio = (a?: Stat, b?: Stat) => (a && b ? a.median / b.median : null);
/** Bandwidth of `a` as a percentage of `b`'s (= b's time / a's time). */
const pct = (a?: Stat, b?: Stat) => (a && b ? (100 * b.median) / a.median : null);

/** Bandwidth of the tcp rpi as a percentage of the raw socket's, over the paired blocks. */
const pairedPct = (r: PingPongRow) => (r.paired ? 100 / r.paired.ratio.median : null);

/** The columns with one series per size, in table order. */
function seriesColumns(columns: PingPongColumn[]): SeriesColumn[] {
  return columns.filter((c): c is SeriesColumn => c !== 'paired');
}

export function latencyColumns(columns: PingPongColumn[]): Column<PingPongRow>[] {
  const has = (c: PingPongColumn) => columns.includes(c);
  const cols: Column<PingPongRow>[] = [{ title: 'size', value: (r) => formatSize(r.size) }];
  for (const c of seriesColumns(columns))
    cols.push({ title: COLUMN_TITLES[c], value: (r) => us(r[c]) });
  if (has('tcp') && has('raw')) cols.push({ title: 'tcp/raw', value: (r) => ratio(r.tcp, r.raw) });
  if (has('tcp') && has('raw-unix'))
    cols.push({ title: 'tcp/unix', value: (r) => ratio(r.tcp, r['raw-unix']) });
  if (has('raw-unix') && has('raw'))
    cols.push({ title: 'unix/raw', value: (r) => ratio(r['raw-unix'], r.raw) });
  if (has('tcp') && has('nopoll'))
    cols.push({ title: 'tcp/nopoll', value: (r) => ratio(r.tcp, r.nopoll) });
  if (has('tcp') && has('inet'))
    cols.push({ title: 'tcp/inet', value: (r) => ratio(r.tcp, r.inet) });
  if (has('tcp') && has('noyield'))
    cols.push({ title: 'tcp/noyield', value: (r) => ratio(r.tcp, r.noyield) });
  if (has('tcp') && has('ompi'))
    cols.push({ title: 'tcp/ompi', value: (r) => ratio(r.tcp, r.ompi) });
  if (has('crtcp') && has('tcp'))
    cols.push({ title: 'crtcp/tcp', value: (r) => ratio(r.crtcp, r.tcp) });
  if (has('smspin') && has('ompi'))
    cols.push({ title: 'spin/vader', value: (r) => ratio(r.smspin, r.ompi) });
  if (has('smblock') && has('tcp'))
    cols.push({ title: 'block/tcp', value: (r) => ratio(r.smblock, r.tcp) });
  if (has('sm') && has('smspin'))
    cols.push({ title: 'hybrid/spin', value: (r) => ratio(r.sm, r.smspin) });
  if (has('ompi') && has('raw'))
    cols.push({ title: 'ompi/raw', value: (r) => ratio(r.ompi, r.raw) });
  if (has('paired')) {
    cols.push({ title: 'paired tcp', value: (r) => us(r.paired?.rpi) });
    cols.push({ title: 'paired raw', value: (r) => us(r.paired?.raw) });
    cols.push({ title: 'paired tcp/raw', value: (r) => r.paired?.ratio.median ?? null });
  }
  return cols;
}

export function bandwidthColumns(columns: PingPongColumn[]): Column<PingPongRow>[] {
  const has = (c: PingPongColumn) => columns.includes(c);
  const cols: Column<PingPongRow>[] = [{ title: 'size', value: (r) => formatSize(r.size) }];
  for (const c of seriesColumns(columns))
    cols.push({ title: COLUMN_TITLES[c], value: (r) => gbs(r.size, r[c]), digits: 3 });
  if (has('tcp') && has('raw'))
    cols.push({ title: 'tcp/raw %', value: (r) => pct(r.tcp, r.raw), digits: 1 });
  if (has('tcp') && has('raw-unix'))
    cols.push({ title: 'tcp/unix %', value: (r) => pct(r.tcp, r['raw-unix']), digits: 1 });
  if (has('raw-unix') && has('raw'))
    cols.push({ title: 'unix/raw %', value: (r) => pct(r['raw-unix'], r.raw), digits: 1 });
  if (has('tcp') && has('nopoll'))
    cols.push({ title: 'tcp/nopoll %', value: (r) => pct(r.tcp, r.nopoll), digits: 1 });
  if (has('tcp') && has('inet'))
    cols.push({ title: 'tcp/inet %', value: (r) => pct(r.tcp, r.inet), digits: 1 });
  if (has('crtcp') && has('tcp'))
    cols.push({ title: 'crtcp/tcp %', value: (r) => pct(r.crtcp, r.tcp), digits: 1 });
  if (has('smspin') && has('ompi'))
    cols.push({ title: 'spin/vader %', value: (r) => pct(r.smspin, r.ompi), digits: 1 });
  if (has('ompi') && has('raw'))
    cols.push({ title: 'ompi/raw %', value: (r) => pct(r.ompi, r.raw), digits: 1 });
  if (has('paired')) {
    cols.push({ title: 'paired tcp', value: (r) => gbs(r.size, r.paired?.rpi), digits: 3 });
    cols.push({ title: 'paired raw', value: (r) => gbs(r.size, r.paired?.raw), digits: 3 });
    cols.push({ title: 'paired tcp/raw %', value: (r) => pairedPct(r), digits: 1 });
  }
  return cols;
}

export interface Target {
  target: string;
  measured: string;
  met: boolean;
}

/**
 * The tcp rpi against every raw loop measured at this row: the `raw socket` and `raw unix`
 * columns (ratio of medians) and the paired blocks (median of the pair-by-pair ratios), as
 * one-way time tcp / raw (above 1: the rpi is slower).
 */
function againstRawLoops(r: PingPongRow): { label: string; x: number }[] {
  const out: { label: string; x: number }[] = [];
  if (r.paired) out.push({ label: 'paired raw', x: r.paired.ratio.median });
  for (const c of ['raw', 'raw-unix'] as const) {
    const x = ratio(r.tcp, r[c]);
    if (x !== null) out.push({ label: COLUMN_TITLES[c], x });
  }
  return out;
}

/** The comparison with the best raw loop: the one the rpi is slowest against. */
function worstAgainstRaw(r: PingPongRow): { label: string; x: number } | null {
  const all = againstRawLoops(r);
  if (all.length === 0) return null;
  return all.reduce((a, b) => (b.x > a.x ? b : a));
}

/**
 * The targets, checked against this run: tcp rpi bandwidth >= 90% of the best raw Node
 * socket loop's at every bandwidth size from 256 KiB up; one-way latency <= 1.2 x the best raw
 * loop's at every latency size up to 1 KiB. "The best raw loop" is whichever raw loop measured at
 * that size the rpi compares worst with: the raw socket (TCP), the raw unix column, and the paired
 * blocks (raw blocks measured next to the rpi's, which separate runs of separate processes cannot
 * give, see README); each line names the loop it was checked against.
 */
export function checkTargets(rows: PingPongRow[]): Target[] {
  const out: Target[] = [];
  for (const r of rows) {
    if (!r.latency || r.size > 1024) continue;
    const w = worstAgainstRaw(r);
    if (w === null) continue;
    out.push({
      target: `latency at ${formatSize(r.size)} <= 1.2 x raw`,
      measured: `${w.x.toFixed(2)} x ${w.label}`,
      met: w.x <= 1.2,
    });
  }
  for (const r of rows) {
    if (!r.bandwidth || r.size < 256 * 1024) continue;
    const w = worstAgainstRaw(r);
    if (w === null) continue;
    const p = 100 / w.x;
    out.push({
      target: `bandwidth at ${formatSize(r.size)} >= 90% of raw`,
      measured: `${p.toFixed(1)} % of ${w.label}`,
      met: p >= 90,
    });
  }
  return out;
}

/**
 * The sm rpi's targets (issue #15), checked against this run: spin one-way at 8 B <= 1 us; spin
 * bandwidth at 1 MiB >= 10 GB/s; block one-way at 8 B <= 0.8 x the tcp rpi's; hybrid one-way
 * at 8 B within 2 x spin's.
 */
export function checkSmTargets(rows: PingPongRow[]): Target[] {
  const out: Target[] = [];
  const at = (size: number) => rows.find((r) => r.size === size);
  const small = at(8);
  const add = (target: string, x: number | null, unit: string, met: (x: number) => boolean) => {
    if (x !== null) out.push({ target, measured: `${x.toFixed(2)} ${unit}`, met: met(x) });
  };
  add('spin one-way at 8 B <= 1 us', us(small?.smspin), 'us', (x) => x <= 1);
  const mib = at(MiB);
  add(
    'spin bandwidth at 1 MiB >= 10 GB/s',
    mib ? gbs(MiB, mib.smspin) : null,
    'GB/s',
    (x) => x >= 10,
  );
  add(
    'block one-way at 8 B <= 0.8 x tcp',
    ratio(small?.smblock, small?.tcp),
    'x tcp',
    (x) => x <= 0.8,
  );
  add(
    'hybrid one-way at 8 B <= 2 x spin',
    ratio(small?.sm, small?.smspin),
    'x spin',
    (x) => x <= 2,
  );
  return out;
}

// ---- the command --------------------------------------------------------------------------

export const pingpongCommand: BenchCommand = {
  name: 'pingpong',
  summary: 'NetPIPE-style ping-pong: tcp rpi vs a raw Node TCP socket vs Open MPI (TCP, loopback)',
  usage: USAGE,
  async run(args) {
    const plan = planPingPong(args);
    const { reps, points, cpus } = plan;
    if (cpus && !which('taskset'))
      throw new Error('taskset (util-linux) not found: install it, or run with --cpus none');
    const root = benchRoot();
    const maxSize = Math.max(1, ...points.map((p) => p.size));
    const runners: Partial<Record<PingPongColumn, Runner>> = {};
    const info: Record<string, unknown> = {};
    const skipped: Record<string, string> = {};
    return withDriverWorkDir('ssi-bench-pingpong-', 'the ping-pong processes', async (workDir) => {
      for (const c of plan.columns) {
        const wait = SM_WAIT[c];
        if (wait !== undefined) {
          const t = await ssiRunner(
            root,
            'pingpong-mpi.mjs',
            { rpi: 'sm', rpi_sm_wait: wait },
            mpiEnv(plan),
          );
          runners[c] = twoRanks(t.run);
          info[c] = t.info;
        } else if (VARIANT_PARAMS[c] !== undefined) {
          const t = await ssiRunner(root, 'pingpong-mpi.mjs', VARIANT_PARAMS[c], mpiEnv(plan));
          runners[c] = twoRanks(t.run);
          info[c] = t.info;
        } else if (c === 'tcp' || c === 'crtcp' || c === 'paired') {
          const rpi = c === 'crtcp' ? 'crtcp' : 'tcp';
          const t = await ssiRunner(root, 'pingpong-mpi.mjs', { rpi }, mpiEnv(plan));
          runners[c] = twoRanks(t.run);
          info[c] = t.info;
        } else if (c === 'raw' || c === 'raw-unix') {
          const t = rawRunner(root, maxSize, plan, c === 'raw-unix' ? workDir : undefined);
          runners[c] = t.run;
          info[c] = t.info;
        } else {
          process.stderr.write('compiling c/pingpong.c with mpicc ...\n');
          const flags = () => ompiFlags(cpus, plan.prepost, plan.rpi === 'sm');
          const t = ompiRunner(root, 'pingpong', workDir, flags, {
            ...envWith(plan),
            ...mpiEnv(plan),
          });
          if ('skip' in t) {
            skipped.ompi = t.skip;
            process.stderr.write(`Open MPI column skipped: ${t.skip}\n`);
          } else {
            runners.ompi = twoRanks(t.run);
            info.ompi = { ...t.info, flags: flags() };
          }
        }
      }
      const columns = plan.columns.filter((c) => runners[c]);
      const samples: Record<string, number[][]> = {};
      for (const c of seriesColumns(columns)) samples[c] = points.map(() => []);
      const pairedNs = plan.pairedSizes.map(() => ({ rpi: [] as number[], raw: [] as number[] }));
      const oneArgs = driverArgs(1, points);
      const t0 = nowNs();
      for (let round = 0; round < reps; round++) {
        // rotate the order, so that no column always runs first (or right after another)
        const order = columns.map((_, i) => columns[(i + round) % columns.length]!);
        for (const c of order) {
          const started = nowNs();
          if (c === 'paired') {
            const got = parsePairedOutput(await runners.paired!(pairedArgs(plan), 600_000), plan);
            got.forEach((s, i) => {
              pairedNs[i]!.rpi.push(...s.rpiNs);
              pairedNs[i]!.raw.push(...s.rawNs);
            });
            const first = pairedStat(got[0]!.rpiNs, got[0]!.rawNs);
            process.stderr.write(
              `round ${round + 1}/${reps} ${COLUMN_TITLES[c].padEnd(10)} ` +
                `${((nowNs() - started) / 1e9).toFixed(1).padStart(5)} s` +
                `  ${formatSize(got[0]!.size)}: tcp ${(first.rpi.median / 1000).toFixed(1)} us,` +
                ` raw ${(first.raw.median / 1000).toFixed(1)} us, paired tcp/raw ${first.ratio.median.toFixed(2)}\n`,
            );
            continue;
          }
          const text = await runners[c]!(oneArgs, 600_000);
          const got = parseDriverOutput(text, points, 1);
          got.forEach((s, i) => {
            samples[c]![i]!.push(s.oneWayNs[0]!);
          });
          const lat = got.find((s) => points.find((p) => p.size === s.size)?.latency);
          const big = got[got.length - 1]!;
          process.stderr.write(
            `round ${round + 1}/${reps} ${COLUMN_TITLES[c].padEnd(10)} ` +
              `${((nowNs() - started) / 1e9).toFixed(1).padStart(5)} s` +
              (lat ? `  ${formatSize(lat.size)}: ${(lat.oneWayNs[0]! / 1000).toFixed(1)} us` : '') +
              `  ${formatSize(big.size)}: ${(big.size / big.oneWayNs[0]!).toFixed(3)} GB/s\n`,
          );
        }
      }
      process.stderr.write(`measured in ${((nowNs() - t0) / 1e9).toFixed(0)} s\n`);

      const rows: PingPongRow[] = points.map((p, i) => {
        const row: PingPongRow = { ...p };
        for (const c of seriesColumns(columns)) row[c] = stat(samples[c]![i]!);
        const j = plan.pairedSizes.indexOf(p.size);
        if (columns.includes('paired') && j >= 0)
          row.paired = pairedStat(pairedNs[j]!.rpi, pairedNs[j]!.raw);
        return row;
      });
      const lat = rows.filter((r) => r.latency);
      const bw = rows.filter((r) => r.bandwidth);
      console.log(
        cpus
          ? `\nProcess 0 on CPU ${cpus[0]}, process 1 on CPU ${cpus[1]} (--cpus ${cpus.join(',')})`
          : '\nProcesses not pinned (--cpus none)',
      );
      for (const [c, why] of Object.entries(skipped))
        console.log(`\n${COLUMN_TITLES[c as PingPongColumn]} column skipped: ${why}`);
      if (lat.length > 0) {
        const pairedNote = columns.includes('paired')
          ? `; paired: median of ${reps * plan.blocks} blocks of ${plan.blockIters} round trips`
          : '';
        console.log(
          `\nOne-way latency, microseconds (median of ${reps} repetitions${pairedNote})\n`,
        );
        console.log(formatTable(latencyColumns(columns), lat));
      }
      if (bw.length > 0) {
        console.log('\nBandwidth, GB/s (size / one-way time, median)\n');
        console.log(formatTable(bandwidthColumns(columns), bw));
      }
      const targets = plan.rpi === 'sm' ? checkSmTargets(rows) : checkTargets(rows);
      if (targets.length > 0) {
        const against =
          plan.rpi === 'sm'
            ? 'sm rpi, this run'
            : 'tcp rpi against the best raw socket loop, this run';
        console.log(`\nTargets (${against})\n`);
        console.log(
          formatTable(
            [
              { title: 'target', value: (t: Target) => t.target },
              { title: 'measured', value: (t) => t.measured },
              { title: 'met', value: (t) => (t.met ? 'yes' : 'NO') },
            ],
            targets,
          ),
        );
      }
      const file = writeResults('pingpong', {
        params: {
          rpi: plan.rpi,
          reps,
          quick: plan.quick,
          latSizes: plan.latSizes,
          bwSizes: plan.bwSizes,
          pairedSizes: plan.pairedSizes,
          prepost: plan.prepost,
          columns: plan.columns,
          cpus: cpus ?? 'not pinned',
          blocks: plan.blocks,
          blockIters: plan.blockIters,
          interleaved: 'round r runs every column once; order rotated each round',
          warmup:
            'every round: 4000 round trips of 8 B first, then per size an unrecorded pass of iters/4 round trips before the timed one',
        },
        drivers: info,
        source: sourceState(root, [
          'packages/mpi',
          'plugins/rpi-tcp',
          'plugins/rpi-crtcp',
          'plugins/rpi-sm',
        ]),
        skipped,
        unit: {
          oneWayNs: 'round trip / 2 in ns (median, min, max, samples: one per round)',
          gbps: 'size / oneWayNs.median = bytes per ns = GB/s',
          paired:
            'per paired size: one sample per block (blocks per round x rounds) on each side, and tcpOverRaw over the block pairs (rpi block / the raw block next to it)',
        },
        rows: rows.map((r) => ({
          size: r.size,
          iters: r.iters,
          latency: r.latency,
          bandwidth: r.bandwidth,
          oneWayNs: {
            tcpRpi: r.tcp,
            tcpNoPoll: r.nopoll,
            tcpInet: r.inet,
            tcpNoYield: r.noyield,
            crtcpRpi: r.crtcp,
            raw: r.raw,
            rawUnix: r['raw-unix'],
            openMpi: r.ompi,
            smHybrid: r.sm,
            smSpin: r.smspin,
            smBlock: r.smblock,
          },
          gbps: {
            tcpRpi: gbs(r.size, r.tcp),
            tcpNoPoll: gbs(r.size, r.nopoll),
            tcpInet: gbs(r.size, r.inet),
            tcpNoYield: gbs(r.size, r.noyield),
            crtcpRpi: gbs(r.size, r.crtcp),
            raw: gbs(r.size, r.raw),
            rawUnix: gbs(r.size, r['raw-unix']),
            openMpi: gbs(r.size, r.ompi),
            smHybrid: gbs(r.size, r.sm),
            smSpin: gbs(r.size, r.smspin),
            smBlock: gbs(r.size, r.smblock),
          },
          tcpOverRaw: ratio(r.tcp, r.raw),
          unixOverRaw: ratio(r['raw-unix'], r.raw),
          crtcpOverTcp: ratio(r.crtcp, r.tcp),
          paired: r.paired && {
            oneWayNs: { tcpRpi: r.paired.rpi, raw: r.paired.raw },
            tcpOverRaw: r.paired.ratio,
          },
        })),
        targets,
      });
      console.log(`\nresults: ${file}`);
      const panels = pingpongPanels(rows, columns);
      if (panels.length > 0) console.log(`chart: ${writeChartBeside(file, panels)}`);
      return 0;
    });
  },
};
