import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CollOp, CollRow } from '../src/commands/coll';
import { collPanels } from '../src/commands/coll-chart';
import { pingpongPanels } from '../src/commands/pingpong-chart';
import type { PingPongRow } from '../src/commands/pingpong-results';
import { stat } from '../src/harness';
import { barChart, lineChart, svgDocument, writeChartBeside } from '../src/svg-chart';

const work = mkdtempSync(join(tmpdir(), 'ssi-bench-svg-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** [x, y] of every <circle> of the polyline drawn for the i-th series, in drawing order. */
function dots(svg: string, color: string): [number, number][] {
  return [
    ...svg.matchAll(
      new RegExp(`<circle cx="([\\d.]+)" cy="([\\d.]+)" r="2.5" fill="${color}"`, 'g'),
    ),
  ].map((m) => [Number(m[1]), Number(m[2])]);
}

describe('svg charts', () => {
  it('draws one curve per series, x by size on a log axis, higher values higher up', () => {
    const panel = lineChart({
      title: 'lat <us>',
      xLabel: 'size',
      yLabel: 'µs',
      xLog: true,
      series: [
        {
          name: 'a',
          points: [
            [1, 10],
            [10, 20],
            [100, 40],
          ],
        },
        {
          name: 'b & c',
          points: [
            [1, 5],
            [10, null],
            [100, 10],
          ],
        },
      ],
    });
    const svg = svgDocument([panel]);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('lat &#60;us&#62;');
    expect(svg).toContain('b &#38; c');
    expect(svg.match(/<polyline/g)).toHaveLength(2);
    const a = dots(svg, '#1f77b4');
    expect(a).toHaveLength(3);
    // log x: 1 → 10 → 100 evenly spaced; y: larger value, smaller SVG y
    expect(a[1]![0] - a[0]![0]).toBeCloseTo(a[2]![0] - a[1]![0], 0);
    expect(a[0]![1]).toBeGreaterThan(a[1]![1]);
    expect(a[1]![1]).toBeGreaterThan(a[2]![1]);
    expect(dots(svg, '#d62728')).toHaveLength(2); // the unmeasured point is skipped
  });

  it('refuses a chart with nothing measured', () => {
    expect(() =>
      lineChart({
        title: 'empty',
        xLabel: 'x',
        yLabel: 'y',
        series: [{ name: 'a', points: [[1, null]] }],
      }),
    ).toThrow('chart "empty": no measured points');
  });

  it('draws ratio bars proportional to their values, with the reference line at 1', () => {
    const svg = svgDocument([
      barChart({
        title: 'ratios',
        yLabel: 'x',
        groups: [
          {
            label: 'bcast np4',
            bars: [
              { name: 'm', value: 2 },
              { name: 'n', value: 1 },
            ],
          },
        ],
        reference: { value: 1, label: 'Open MPI' },
      }),
    ]);
    const heights = [
      ...svg.matchAll(
        /<rect x="[\d.]+" y="[\d.]+" width="[\d.]+" height="([\d.]+)" fill="#\w+"><title>/g,
      ),
    ].map((m) => Number(m[1]));
    expect(heights).toHaveLength(2);
    expect(heights[0]! / heights[1]!).toBeCloseTo(2, 1);
    const ref = /<line x1="\d+" y1="([\d.]+)"[^>]*stroke-dasharray/.exec(svg);
    const barTop =
      /<rect x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="[\d.]+" fill="#d62728"/.exec(svg);
    expect(Number(ref?.[1])).toBeCloseTo(Number(barTop?.[1]), 0); // the bar of value 1 reaches the line
  });

  it('writes <results>.svg beside <results>.json', () => {
    const json = join(work, 'pingpong-x.json');
    writeFileSync(json, '{}');
    const svg = writeChartBeside(json, [
      barChart({
        title: 't',
        yLabel: 'y',
        groups: [{ label: 'g', bars: [{ name: 'a', value: 1 }] }],
      }),
    ]);
    expect(svg).toBe(join(work, 'pingpong-x.svg'));
    expect(readFileSync(svg, 'utf8')).toMatch(/^<svg /);
  });
});

describe("the bench commands' charts", () => {
  const s = (ns: number) => stat([ns, ns]);
  it('pingpong: a latency and a bandwidth panel, one curve per measured column with its baselines', () => {
    const rows: PingPongRow[] = [1, 1024, 65536].map((size) => ({
      size,
      iters: 10,
      latency: size <= 1024,
      bandwidth: size >= 1024,
      tcp: s(20_000 + size),
      raw: s(10_000 + size),
      ompi: s(15_000 + size),
    }));
    const panels = pingpongPanels(rows, ['tcp', 'raw', 'ompi', 'paired']);
    expect(panels).toHaveLength(2);
    const svg = svgDocument(panels);
    for (const name of ['tcp rpi', 'raw socket', 'Open MPI']) {
      expect(svg.split(`>${name}</text>`).length - 1).toBe(2);
    }
    expect(svg).toContain('Ping-pong latency');
    expect(svg).toContain('Ping-pong bandwidth');
  });

  it('coll: one bar per ssi module and group, none without an Open MPI column', () => {
    const op = { name: 'bcast' } as CollOp;
    const rows: CollRow[] = [2, 4].map((np) => ({
      op,
      np,
      iters: 1,
      warmup: 1,
      times: { 'ssi:lam_basic': s(3000), 'ssi:tuned': s(1500), ompi: s(1000) },
    }));
    const [panel] = collPanels(rows, ['ssi:lam_basic', 'ssi:tuned', 'ompi']);
    expect(panel?.body.match(/<title>bcast np\d ssi \w+: [\d.]+<\/title>/g)).toEqual([
      '<title>bcast np2 ssi lam_basic: 3</title>',
      '<title>bcast np2 ssi tuned: 1.5</title>',
      '<title>bcast np4 ssi lam_basic: 3</title>',
      '<title>bcast np4 ssi tuned: 1.5</title>',
    ]);
    expect(collPanels(rows, ['ssi:lam_basic'])).toEqual([]);
  });
});
