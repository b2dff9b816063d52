import { Options } from '../harness';
import { PLAN_NAMES, type PlansOptions, parsePlans } from './cr-plans';
import { allowedCpus, chooseCpus, iterations, type Point } from './pingpong-plan';

/** The cr command's usage text (also the tail of every option error). */
export const USAGE = `usage: node tools/bench/dist/cli.js cr [options]

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
