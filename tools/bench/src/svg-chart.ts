import { writeFileSync } from 'node:fs';

/**
 * Small SVG charts for bench results, written beside their JSON so a run is seen at a glance.
 * Plain strings, no dependency: a chart is a panel of a fixed size; a document stacks panels.
 * Bench commands build panels from their rows and call `writeChartBeside(jsonFile, panels)`.
 */

export interface Series {
  name: string;
  /** [x, y] points; null y (not measured) is skipped. */
  points: [number, number | null][];
}

export interface LineChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  /** Logarithmic axes (NetPIPE plots size on a log scale). */
  xLog?: boolean;
  yLog?: boolean;
  /** Tick label of an x value (default: the number). */
  xTick?: (x: number) => string;
}

export interface Bar {
  name: string;
  value: number | null;
}

export interface BarChartSpec {
  title: string;
  yLabel: string;
  groups: { label: string; bars: Bar[] }[];
  /** A horizontal reference line (1 for a ratio against a baseline) and its label. */
  reference?: { value: number; label: string };
}

/** One chart, drawn in its own coordinates; `svgDocument` places panels one under another. */
export interface Panel {
  title: string;
  width: number;
  height: number;
  body: string;
}

const W = 640;
const H = 360;
const M = { left: 70, right: 150, top: 34, bottom: 50 };
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2'];

export function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const fmt = (v: number) =>
  Math.abs(v) >= 100 ? v.toFixed(0) : Number(v.toPrecision(3)).toString();

/** A scale from [lo, hi] onto [a, b], linear or logarithmic. */
function scale(lo: number, hi: number, a: number, b: number, log: boolean) {
  const f = log ? Math.log10 : (v: number) => v;
  const [l, h] = [f(lo), f(hi)];
  return (v: number) => (h === l ? (a + b) / 2 : a + ((f(v) - l) / (h - l)) * (b - a));
}

/** Tick values: powers of ten on a log axis, five even steps on a linear one. */
function ticks(lo: number, hi: number, log: boolean): number[] {
  if (log) {
    const out: number[] = [];
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
      const v = 10 ** e;
      if (v >= lo / 1.0001 && v <= hi * 1.0001) out.push(v);
    }
    return out.length >= 2 ? out : [lo, hi];
  }
  return [0, 1, 2, 3, 4, 5].map((i) => lo + ((hi - lo) * i) / 5);
}

function frame(title: string, xLabel: string, yLabel: string): string {
  const [x0, y1] = [M.left, H - M.bottom];
  return [
    `<text x="${W / 2 - M.right / 2}" y="20" text-anchor="middle" font-weight="bold">${escapeXml(title)}</text>`,
    `<line x1="${x0}" y1="${M.top}" x2="${x0}" y2="${y1}" stroke="#333"/>`,
    `<line x1="${x0}" y1="${y1}" x2="${W - M.right}" y2="${y1}" stroke="#333"/>`,
    `<text x="${(x0 + W - M.right) / 2}" y="${H - 10}" text-anchor="middle">${escapeXml(xLabel)}</text>`,
    `<text transform="translate(16 ${(M.top + y1) / 2}) rotate(-90)" text-anchor="middle">${escapeXml(yLabel)}</text>`,
  ].join('\n');
}

function legend(names: string[]): string {
  return names
    .map((n, i) => {
      const y = M.top + 8 + i * 18;
      const c = COLORS[i % COLORS.length];
      return `<rect x="${W - M.right + 12}" y="${y - 8}" width="12" height="10" fill="${c}"/><text x="${W - M.right + 30}" y="${y + 1}">${escapeXml(n)}</text>`;
    })
    .join('\n');
}

/** Curves over a shared x axis: one polyline with dots per series. */
export function lineChart(spec: LineChartSpec): Panel {
  // A log axis has no place for 0 (a 0-byte message): such points are left out of the curve.
  const drawable = (p: [number, number | null]): p is [number, number] =>
    p[1] !== null &&
    Number.isFinite(p[1]) &&
    Number.isFinite(p[0]) &&
    (!spec.xLog || p[0] > 0) &&
    (!spec.yLog || p[1] > 0);
  const pts = spec.series.flatMap((s) => s.points.filter(drawable));
  if (pts.length === 0) throw new Error(`chart "${spec.title}": no measured points`);
  const xs = pts.map((p) => p[0]);
  const ys = pts.map((p) => p[1]);
  const [xlo, xhi] = [Math.min(...xs), Math.max(...xs)];
  const [ylo, yhi] = spec.yLog ? [Math.min(...ys), Math.max(...ys)] : [0, Math.max(...ys) * 1.05];
  const sx = scale(xlo, xhi, M.left, W - M.right, spec.xLog ?? false);
  const sy = scale(ylo, yhi, H - M.bottom, M.top, spec.yLog ?? false);
  const xt = spec.xTick ?? fmt;
  const grid = [
    ...ticks(xlo, xhi, spec.xLog ?? false).map(
      (v) =>
        `<text x="${sx(v).toFixed(1)}" y="${H - M.bottom + 16}" text-anchor="middle" font-size="11">${escapeXml(xt(v))}</text>`,
    ),
    ...ticks(ylo, yhi, spec.yLog ?? false).map(
      (v) =>
        `<line x1="${M.left}" y1="${sy(v).toFixed(1)}" x2="${W - M.right}" y2="${sy(v).toFixed(1)}" stroke="#ddd"/><text x="${M.left - 6}" y="${(sy(v) + 4).toFixed(1)}" text-anchor="end" font-size="11">${fmt(v)}</text>`,
    ),
  ];
  const lines = spec.series.map((s, i) => {
    const c = COLORS[i % COLORS.length];
    const p = s.points.filter(drawable).map(([x, y]) => [sx(x).toFixed(1), sy(y).toFixed(1)]);
    const dots = p.map(([x, y]) => `<circle cx="${x}" cy="${y}" r="2.5" fill="${c}"/>`).join('');
    return `<polyline fill="none" stroke="${c}" stroke-width="1.8" points="${p.map((q) => q.join(',')).join(' ')}"/>${dots}`;
  });
  const body = [
    frame(spec.title, spec.xLabel, spec.yLabel),
    ...grid,
    ...lines,
    legend(spec.series.map((s) => s.name)),
  ];
  return { title: spec.title, width: W, height: H, body: body.join('\n') };
}

/** Grouped bars (one group per label, one bar per name) with an optional reference line. */
export function barChart(spec: BarChartSpec): Panel {
  const names = [...new Set(spec.groups.flatMap((g) => g.bars.map((b) => b.name)))];
  const values = spec.groups.flatMap((g) => g.bars.map((b) => b.value ?? 0));
  if (spec.groups.length === 0) throw new Error(`chart "${spec.title}": no groups`);
  const yhi = Math.max(...values, spec.reference?.value ?? 0) * 1.1 || 1;
  const sy = scale(0, yhi, H - M.bottom, M.top, false);
  const groupW = (W - M.left - M.right) / spec.groups.length;
  const barW = Math.max(2, (groupW * 0.8) / Math.max(1, names.length));
  const out = [frame(spec.title, '', spec.yLabel)];
  for (const v of ticks(0, yhi, false)) {
    out.push(
      `<line x1="${M.left}" y1="${sy(v).toFixed(1)}" x2="${W - M.right}" y2="${sy(v).toFixed(1)}" stroke="#eee"/><text x="${M.left - 6}" y="${(sy(v) + 4).toFixed(1)}" text-anchor="end" font-size="11">${fmt(v)}</text>`,
    );
  }
  spec.groups.forEach((g, gi) => {
    const gx = M.left + gi * groupW + groupW * 0.1;
    g.bars.forEach((b) => {
      if (b.value === null || !Number.isFinite(b.value)) return;
      const i = names.indexOf(b.name);
      const y = sy(b.value);
      out.push(
        `<rect x="${(gx + i * barW).toFixed(1)}" y="${y.toFixed(1)}" width="${(barW - 1).toFixed(1)}" height="${(H - M.bottom - y).toFixed(1)}" fill="${COLORS[i % COLORS.length]}"><title>${escapeXml(`${g.label} ${b.name}: ${fmt(b.value)}`)}</title></rect>`,
      );
    });
    out.push(
      `<text transform="translate(${(gx + groupW * 0.4).toFixed(1)} ${H - M.bottom + 12}) rotate(30)" font-size="10">${escapeXml(g.label)}</text>`,
    );
  });
  if (spec.reference) {
    const y = sy(spec.reference.value).toFixed(1);
    out.push(
      `<line x1="${M.left}" y1="${y}" x2="${W - M.right}" y2="${y}" stroke="#000" stroke-dasharray="5 3"/><text x="${W - M.right + 4}" y="${y}" font-size="11">${escapeXml(spec.reference.label)}</text>`,
    );
  }
  out.push(legend(names));
  return { title: spec.title, width: W, height: H, body: out.join('\n') };
}

/** An SVG document with the panels one under another. */
export function svgDocument(panels: Panel[]): string {
  const width = Math.max(...panels.map((p) => p.width));
  let y = 0;
  const parts = panels.map((p) => {
    const g = `<g transform="translate(0 ${y})">\n${p.body}\n</g>`;
    y += p.height;
    return g;
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" viewBox="0 0 ${width} ${y}" font-family="sans-serif" font-size="12" role="img">`,
    `<title>${escapeXml(panels.map((p) => p.title).join('; '))}</title>`,
    `<rect width="${width}" height="${y}" fill="#fff"/>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}

/** Writes the panels as `<results>.svg` beside `<results>.json`; returns the SVG's path. */
export function writeChartBeside(jsonFile: string, panels: Panel[]): string {
  const file = jsonFile.replace(/\.json$/, '') + '.svg';
  writeFileSync(file, svgDocument(panels));
  return file;
}
