import { barChart, type Panel } from '../svg-chart';
import { type CollColumn, type CollRow, columnTitle } from './coll';

/**
 * Each ssi module's time per call as a ratio to Open MPI's in the same run, one group of bars
 * per (collective, np); the dashed line at 1 is Open MPI. Without an Open MPI column there is
 * no baseline to draw against, and no chart.
 */
export function collPanels(rows: CollRow[], columns: readonly CollColumn[]): Panel[] {
  const ssi = columns.filter((c) => c !== 'ompi');
  if (!columns.includes('ompi') || ssi.length === 0) return [];
  const groups = rows.map((r) => ({
    label: `${r.op.name} np${r.np}`,
    bars: ssi.map((c) => ({
      name: columnTitle(c),
      value: r.times[c] && r.times.ompi ? r.times[c].median / r.times.ompi.median : null,
    })),
  }));
  return [
    barChart({
      title: 'Collectives: time per call / Open MPI (median; lower is better)',
      yLabel: 'ratio to Open MPI',
      groups,
      reference: { value: 1, label: 'Open MPI' },
    }),
  ];
}
