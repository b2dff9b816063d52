import type { Stat } from '../harness';
import { formatSize } from '../harness';
import { lineChart, type Panel, type Series } from '../svg-chart';
import { COLUMN_TITLES, type PingPongColumn } from './pingpong-plan';
import type { PingPongRow } from './pingpong-results';

type Measured = Exclude<PingPongColumn, 'paired'>;

/** NetPIPE's two pictures of a ping-pong run: one-way latency and bandwidth over message size. */
export function pingpongPanels(rows: PingPongRow[], columns: PingPongColumn[]): Panel[] {
  const measured = columns.filter((c): c is Measured => c !== 'paired');
  const series = (pick: (r: PingPongRow) => boolean, y: (r: PingPongRow, s: Stat) => number) =>
    measured
      .map(
        (c): Series => ({
          name: COLUMN_TITLES[c],
          points: rows.filter(pick).map((r) => [r.size, r[c] ? y(r, r[c]) : null]),
        }),
      )
      .filter((s) => s.points.some((p) => p[1] !== null));
  const panels: Panel[] = [];
  const lat = series(
    (r) => r.latency,
    (_r, s) => s.median / 1000,
  );
  if (lat.length > 0) {
    panels.push(
      lineChart({
        title: 'Ping-pong latency (one way, median)',
        xLabel: 'message size',
        yLabel: 'µs',
        series: lat,
        xLog: true,
        yLog: true,
        xTick: formatSize,
      }),
    );
  }
  const bw = series(
    (r) => r.bandwidth,
    (r, s) => r.size / s.median,
  );
  if (bw.length > 0) {
    panels.push(
      lineChart({
        title: 'Ping-pong bandwidth (size / one-way time)',
        xLabel: 'message size',
        yLabel: 'GB/s',
        series: bw,
        xLog: true,
        xTick: formatSize,
      }),
    );
  }
  return panels;
}
