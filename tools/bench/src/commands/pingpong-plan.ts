import { readFileSync } from 'node:fs';
import { Options } from '../harness';

/** The ping-pong command's usage text (also the tail of every option error). */
export const USAGE = `usage: node tools/bench/dist/cli.js pingpong [options]

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
export const RPI_COLUMNS: Record<'tcp' | 'crtcp' | 'sm', PingPongColumn[]> = {
  tcp: ['tcp', 'nopoll', 'inet', 'noyield', 'raw', 'raw-unix', 'ompi', 'paired'],
  crtcp: ['crtcp', 'raw', 'ompi', 'paired'],
  sm: ['smspin', 'smblock', 'sm', 'tcp', 'ompi'],
};

/** The tcp variants: `nopoll` is issue 18's "today" (no polling, no yields, TCP only). */
export const VARIANT_PARAMS: Partial<Record<PingPongColumn, Record<string, string | number>>> = {
  nopoll: { rpi: 'tcp', mpi_base_poll_us: 0, mpi_base_yield_every: 0, rpi_tcp_unix: 0 },
  inet: { rpi: 'tcp', rpi_tcp_unix: 0 },
  noyield: { rpi: 'tcp', mpi_base_yield_every: 0 },
};

/** The sm columns' wait modes (`rpi_sm_wait`). */
export const SM_WAIT: Partial<Record<PingPongColumn, string>> = {
  sm: 'hybrid',
  smspin: 'spin',
  smblock: 'block',
};

/** The columns with one series per size (paired gives two per latency size, see PairedStat). */
export type SeriesColumn = Exclude<PingPongColumn, 'paired'>;

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

export const MiB = 1024 * 1024;

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
