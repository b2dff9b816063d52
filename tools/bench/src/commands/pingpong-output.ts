import { positiveNumbers, prefixedJson, resultLines } from '../harness';
import type { PingPongPlan, Point } from './pingpong-plan';

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
