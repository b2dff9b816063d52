import { type Column, formatSize, type Stat, stat } from '../harness';
import { COLUMN_TITLES, MiB, type PingPongColumn, type SeriesColumn } from './pingpong-plan';

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
export function seriesColumns(columns: PingPongColumn[]): SeriesColumn[] {
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

/** A row as the results file records it: every column's one-way time, GB/s and the ratios. */
export function rowForJson(r: PingPongRow) {
  return {
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
  };
}
