import { type Column, formatSize, type Stat, stat } from '../harness';
import type { JobConfig } from './cr-options';
import { type CoordSample, PHASE_KEYS, type Phases } from './cr-output';
import type { Point } from './pingpong-plan';

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

/** The target for the coordination time of `np` ranks: 50 ms + 2 ms per rank. */
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
