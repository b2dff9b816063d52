import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type Column, formatSize, type Stat, stat } from '../harness';

/**
 * The `plans` part of `ssi-bench cr` (issue #17): checkpoint time and bytes written per storage
 * plan (`--ssi crlam_self_plan local|duplicate|parity`) against `local`, for given state sizes
 * per rank. One job per (size, plan, round) through the real mpirun; each job takes 1 unrecorded
 * and N recorded checkpoints (programs/cr-plans.mjs); medians over every recorded checkpoint of
 * every round.
 */
export const PLAN_NAMES = ['local', 'duplicate', 'parity'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export interface PlansOptions {
  plans: PlanName[];
  /** state bytes per rank */
  sizes: number[];
  np: number;
  /** parity set size */
  paritySet: number;
  checkpoints: number;
}

/** `--plans a,b` checked: known names, local always measured (the baseline), in a fixed order. */
export function parsePlans(raw: string): PlanName[] {
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of names)
    if (!(PLAN_NAMES as readonly string[]).includes(n))
      throw new Error(`--plans: no plan "${n}" (choose from ${PLAN_NAMES.join(',')})`);
  const set = new Set<string>(['local', ...names]);
  return PLAN_NAMES.filter((p) => set.has(p));
}

/** The mpirun flags that select a plan (the second location is a directory of the bench's). */
export function planFlags(plan: PlanName, secondDir: string, paritySet: number): string[] {
  const f = ['--ssi', 'crlam_self_plan', plan];
  if (plan !== 'local') f.push('--ssi', 'crlam_self_second_dir', secondDir);
  if (plan === 'parity') f.push('--ssi', 'crlam_self_parity_set', String(paritySet));
  return f;
}

export interface PlansSample {
  np: number;
  bytes: number;
  ms: number[];
  heldMs: number[];
  series: number[];
}

/** The CRPLANS line of programs/cr-plans.mjs, checked. */
export function parsePlansOutput(text: string, np: number, bytes: number, n: number): PlansSample {
  const lines = text
    .split('\n')
    .map((l) => l.replace(/^\[\d+\] /, ''))
    .filter((l) => l.startsWith('CRPLANS '));
  if (lines.length !== 1) throw new Error(`expected one CRPLANS line, got ${lines.length}`);
  const v = JSON.parse(lines[0]!.slice('CRPLANS '.length)) as Partial<PlansSample>;
  const nums = (xs: unknown) =>
    Array.isArray(xs) && xs.length === n && xs.every((x) => Number.isFinite(x) && x >= 0);
  if (v.np !== np || v.bytes !== bytes || !nums(v.ms) || !nums(v.heldMs) || !nums(v.series))
    throw new Error(`malformed CRPLANS line: ${lines[0]!.slice(0, 300)}`);
  return v as PlansSample;
}

/** Bytes of the files of `series-<n>` under a job directory (0 when there is none). */
export function seriesBytes(jobDir: string, series: number): number {
  const dir = join(jobDir, `series-${series}`);
  let total = 0;
  try {
    for (const f of readdirSync(dir)) {
      if (f === 'MANIFEST.json') continue;
      total += statSync(join(dir, f)).size;
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return total;
}

export interface PlanRow {
  plan: PlanName;
  size: number;
  ms: Stat;
  heldMs: Stat;
  /** bytes written per checkpoint: rank files, and files in the second location */
  primaryBytes: number;
  secondBytes: number;
  localMs?: number;
  localHeldMs?: number;
  localBytes?: number;
}

export function planColumns(): Column<PlanRow>[] {
  const ratio = (a: number, b?: number) => (b ? a / b : null);
  return [
    { title: 'state/rank', value: (r) => formatSize(r.size) },
    { title: 'plan', value: (r) => r.plan },
    { title: 'complete ms', value: (r) => r.ms.median, digits: 1 },
    { title: 'x local', value: (r) => ratio(r.ms.median, r.localMs), digits: 2 },
    { title: 'ranks held ms', value: (r) => r.heldMs.median, digits: 1 },
    { title: 'x local', value: (r) => ratio(r.heldMs.median, r.localHeldMs), digits: 2 },
    { title: 'MB written', value: (r) => (r.primaryBytes + r.secondBytes) / 1e6, digits: 1 },
    { title: 'of which 2nd', value: (r) => r.secondBytes / 1e6, digits: 1 },
    {
      title: 'x local',
      value: (r) => ratio(r.primaryBytes + r.secondBytes, r.localBytes),
      digits: 2,
    },
  ];
}

/** Rows with the local baseline of the same size filled in. */
export function withBaseline(rows: PlanRow[]): PlanRow[] {
  return rows.map((r) => {
    const base = rows.find((x) => x.plan === 'local' && x.size === r.size);
    return base
      ? {
          ...r,
          localMs: base.ms.median,
          localHeldMs: base.heldMs.median,
          localBytes: base.primaryBytes + base.secondBytes,
        }
      : r;
  });
}

export function planRow(
  plan: PlanName,
  size: number,
  samples: PlansSample[],
  bytes: { primary: number; second: number },
): PlanRow {
  return {
    plan,
    size,
    ms: stat(samples.flatMap((s) => s.ms)),
    heldMs: stat(samples.flatMap((s) => s.heldMs)),
    primaryBytes: bytes.primary,
    secondBytes: bytes.second,
  };
}

/** Runs one job through mpirun (cr.ts's runner), returning its output. */
export type RunJob = (flags: string[], program: string[], what: string) => Promise<{ out: string }>;

/**
 * Every (size, plan) once per round, plans in an order rotated each round; the bytes are those of
 * the last recorded series of the last round (the same for every series of a job).
 */
export async function runPlans(
  o: PlansOptions & { reps: number; program: string; checkpointRoot: string; secondRoot: string },
  run: RunJob,
  progress: (line: string) => void,
): Promise<PlanRow[]> {
  const rows: PlanRow[] = [];
  for (const size of o.sizes) {
    const samples = new Map(o.plans.map((p) => [p, [] as PlansSample[]]));
    const bytes = new Map<PlanName, { primary: number; second: number }>();
    for (let round = 0; round < o.reps; round++) {
      const order = o.plans.map((_, i) => o.plans[(i + round) % o.plans.length]!);
      for (const plan of order) {
        const ckpt = join(o.checkpointRoot, `${plan}-${size}-${round}`);
        const second = join(o.secondRoot, `${plan}-${size}-${round}`);
        const flags = [
          '-np',
          String(o.np),
          '--ssi',
          'rpi',
          'crtcp',
          '--ssi',
          'cr',
          'self',
          '--ssi',
          'crlam_self_dir',
          ckpt,
          ...planFlags(plan, second, o.paritySet),
        ];
        const what = `${o.checkpoints} checkpoints of ${formatSize(size)} per rank, plan ${plan}`;
        const r = await run(flags, [o.program, String(size), '1', String(o.checkpoints)], what);
        const s = parsePlansOutput(r.out, o.np, size, o.checkpoints);
        samples.get(plan)!.push(s);
        const last = s.series.at(-1)!;
        const job = readdirSync(ckpt)[0]!;
        bytes.set(plan, {
          primary: seriesBytes(join(ckpt, job), last),
          second: plan === 'local' ? 0 : seriesBytes(join(second, job), last),
        });
        progress(
          `round ${round + 1}/${o.reps} plans ${formatSize(size)} ${plan.padEnd(9)} complete ${s.ms.map((x) => x.toFixed(0)).join(',')} ms, held ${s.heldMs.map((x) => x.toFixed(0)).join(',')} ms`,
        );
        rmSync(ckpt, { recursive: true, force: true });
        rmSync(second, { recursive: true, force: true });
      }
    }
    for (const plan of o.plans)
      rows.push(planRow(plan, size, samples.get(plan)!, bytes.get(plan)!));
  }
  return withBaseline(rows);
}
