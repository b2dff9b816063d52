import { benchRoot, sourceState, which, withDriverWorkDir } from '../drivers';
import { type BenchCommand, formatSize, formatTable, nowNs, stat, writeResults } from '../harness';
import { writeChartBeside } from '../svg-chart';
import { pingpongPanels } from './pingpong-chart';
import { parseDriverOutput, parsePairedOutput } from './pingpong-output';
import {
  COLUMN_TITLES,
  driverArgs,
  type PingPongColumn,
  type PingPongPlan,
  pairedArgs,
  planPingPong,
  USAGE,
} from './pingpong-plan';
import {
  bandwidthColumns,
  checkSmTargets,
  checkTargets,
  latencyColumns,
  type PingPongRow,
  pairedStat,
  rowForJson,
  seriesColumns,
  type Target,
} from './pingpong-results';
import { columnRunners, type Runner } from './pingpong-runners';

/** Every column's samples: one per round and point, and the paired blocks per paired size. */
interface Samples {
  series: Record<string, number[][]>;
  paired: { rpi: number[]; raw: number[] }[];
}

export const pingpongCommand: BenchCommand = {
  name: 'pingpong',
  summary: 'NetPIPE-style ping-pong: tcp rpi vs a raw Node TCP socket vs Open MPI (TCP, loopback)',
  usage: USAGE,
  async run(args) {
    const plan = planPingPong(args);
    if (plan.cpus && !which('taskset'))
      throw new Error('taskset (util-linux) not found: install it, or run with --cpus none');
    const root = benchRoot();
    return withDriverWorkDir('ssi-bench-pingpong-', 'the ping-pong processes', async (workDir) => {
      const { runners, info, skipped } = await columnRunners(plan, root, workDir);
      const columns = plan.columns.filter((c) => runners[c]);
      const samples = await measureRounds(plan, columns, runners);
      const rows = tabulate(plan, columns, samples);
      const targets = plan.rpi === 'sm' ? checkSmTargets(rows) : checkTargets(rows);
      printReport(plan, columns, rows, skipped, targets);
      const file = writeResults('pingpong', {
        params: resultParams(plan),
        drivers: info,
        source: sourceState(root, [
          'packages/mpi',
          'plugins/rpi-tcp',
          'plugins/rpi-crtcp',
          'plugins/rpi-sm',
        ]),
        skipped,
        unit: {
          oneWayNs: 'round trip / 2 in ns (median, min, max, samples: one per round)',
          gbps: 'size / oneWayNs.median = bytes per ns = GB/s',
          paired:
            'per paired size: one sample per block (blocks per round x rounds) on each side, and tcpOverRaw over the block pairs (rpi block / the raw block next to it)',
        },
        rows: rows.map(rowForJson),
        targets,
      });
      console.log(`\nresults: ${file}`);
      const panels = pingpongPanels(rows, columns);
      if (panels.length > 0) console.log(`chart: ${writeChartBeside(file, panels)}`);
      return 0;
    });
  },
};

/** Runs every column once per round, the order rotated each round, and collects the samples. */
async function measureRounds(
  plan: PingPongPlan,
  columns: PingPongColumn[],
  runners: Partial<Record<PingPongColumn, Runner>>,
): Promise<Samples> {
  const { reps, points } = plan;
  const samples: Samples = {
    series: Object.fromEntries(seriesColumns(columns).map((c) => [c, points.map(() => [])])),
    paired: plan.pairedSizes.map(() => ({ rpi: [], raw: [] })),
  };
  const oneArgs = driverArgs(1, points);
  const t0 = nowNs();
  for (let round = 0; round < reps; round++) {
    // rotate the order, so that no column always runs first (or right after another)
    const order = columns.map((_, i) => columns[(i + round) % columns.length]!);
    for (const c of order) {
      const started = nowNs();
      const head = () =>
        `round ${round + 1}/${reps} ${COLUMN_TITLES[c].padEnd(10)} ` +
        `${((nowNs() - started) / 1e9).toFixed(1).padStart(5)} s`;
      if (c === 'paired') {
        const got = parsePairedOutput(await runners.paired!(pairedArgs(plan), 600_000), plan);
        got.forEach((s, i) => {
          samples.paired[i]!.rpi.push(...s.rpiNs);
          samples.paired[i]!.raw.push(...s.rawNs);
        });
        const first = pairedStat(got[0]!.rpiNs, got[0]!.rawNs);
        process.stderr.write(
          `${head()}  ${formatSize(got[0]!.size)}: tcp ${(first.rpi.median / 1000).toFixed(1)} us,` +
            ` raw ${(first.raw.median / 1000).toFixed(1)} us, paired tcp/raw ${first.ratio.median.toFixed(2)}\n`,
        );
        continue;
      }
      const got = parseDriverOutput(await runners[c]!(oneArgs, 600_000), points, 1);
      got.forEach((s, i) => {
        samples.series[c]![i]!.push(s.oneWayNs[0]!);
      });
      const lat = got.find((s) => points.find((p) => p.size === s.size)?.latency);
      const big = got[got.length - 1]!;
      process.stderr.write(
        head() +
          (lat ? `  ${formatSize(lat.size)}: ${(lat.oneWayNs[0]! / 1000).toFixed(1)} us` : '') +
          `  ${formatSize(big.size)}: ${(big.size / big.oneWayNs[0]!).toFixed(3)} GB/s\n`,
      );
    }
  }
  process.stderr.write(`measured in ${((nowNs() - t0) / 1e9).toFixed(0)} s\n`);
  return samples;
}

/** One row per point: every column's statistics, and the paired ones at the paired sizes. */
function tabulate(plan: PingPongPlan, columns: PingPongColumn[], s: Samples): PingPongRow[] {
  return plan.points.map((p, i) => {
    const row: PingPongRow = { ...p };
    for (const c of seriesColumns(columns)) row[c] = stat(s.series[c]![i]!);
    const j = plan.pairedSizes.indexOf(p.size);
    if (columns.includes('paired') && j >= 0)
      row.paired = pairedStat(s.paired[j]!.rpi, s.paired[j]!.raw);
    return row;
  });
}

function printReport(
  plan: PingPongPlan,
  columns: PingPongColumn[],
  rows: PingPongRow[],
  skipped: Record<string, string>,
  targets: Target[],
): void {
  const { cpus, reps } = plan;
  console.log(
    cpus
      ? `\nProcess 0 on CPU ${cpus[0]}, process 1 on CPU ${cpus[1]} (--cpus ${cpus.join(',')})`
      : '\nProcesses not pinned (--cpus none)',
  );
  for (const [c, why] of Object.entries(skipped))
    console.log(`\n${COLUMN_TITLES[c as PingPongColumn]} column skipped: ${why}`);
  const lat = rows.filter((r) => r.latency);
  if (lat.length > 0) {
    const pairedNote = columns.includes('paired')
      ? `; paired: median of ${reps * plan.blocks} blocks of ${plan.blockIters} round trips`
      : '';
    console.log(`\nOne-way latency, microseconds (median of ${reps} repetitions${pairedNote})\n`);
    console.log(formatTable(latencyColumns(columns), lat));
  }
  const bw = rows.filter((r) => r.bandwidth);
  if (bw.length > 0) {
    console.log('\nBandwidth, GB/s (size / one-way time, median)\n');
    console.log(formatTable(bandwidthColumns(columns), bw));
  }
  if (targets.length === 0) return;
  const against =
    plan.rpi === 'sm' ? 'sm rpi, this run' : 'tcp rpi against the best raw socket loop, this run';
  console.log(`\nTargets (${against})\n`);
  console.log(
    formatTable(
      [
        { title: 'target', value: (t: Target) => t.target },
        { title: 'measured', value: (t) => t.measured },
        { title: 'met', value: (t) => (t.met ? 'yes' : 'NO') },
      ],
      targets,
    ),
  );
}

function resultParams(plan: PingPongPlan) {
  return {
    rpi: plan.rpi,
    reps: plan.reps,
    quick: plan.quick,
    latSizes: plan.latSizes,
    bwSizes: plan.bwSizes,
    pairedSizes: plan.pairedSizes,
    prepost: plan.prepost,
    columns: plan.columns,
    cpus: plan.cpus ?? 'not pinned',
    blocks: plan.blocks,
    blockIters: plan.blockIters,
    interleaved: 'round r runs every column once; order rotated each round',
    warmup:
      'every round: 4000 round trips of 8 B first, then per size an unrecorded pass of iters/4 round trips before the timed one',
  };
}
