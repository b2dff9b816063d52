import { prefixedJson } from '../harness';

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
