import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runChild } from '../drivers';
import { formatSize, nowNs, stat } from '../harness';
import { CRTCP, type CrPlan, mpirunFlags, TCP } from './cr-options';
import {
  type CoordSample,
  type HeatRun,
  parseCoordOutput,
  parseHeatOutput,
  stripRank,
} from './cr-output';
import { type CoordRow, coordRow, type HeatRow } from './cr-results';
import { parseDriverOutput } from './pingpong-output';
import { driverArgs } from './pingpong-plan';

/** packages/cli/dist/bin/mpirun.js of this checkout, or a clear error. */
export function mpirunPath(root: string): string {
  const p = join(root, '..', '..', 'packages', 'cli', 'dist', 'bin', 'mpirun.js');
  if (!existsSync(p)) throw new Error(`${p} is missing: build @ssi/cli (pnpm build)`);
  return p;
}

interface Ran {
  out: string;
  wallMs: number;
}

/**
 * Runs one job through the real mpirun, in a process group of its own (a kill reaches the ranks)
 * and a universe of its own: the session suffix names no running universe, so mpirun boots a
 * private one (which goes when mpirun goes) and never joins another user's or engineer's job.
 */
export async function runMpirun(
  root: string,
  flags: string[],
  program: string[],
  opts: { cwd: string; timeoutMs: number; what: string; cpus?: [number, number] | null },
): Promise<Ran> {
  const mpiUrl = pathToFileURL(join(root, '..', '..', 'packages', 'mpi', 'dist', 'index.js')).href;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LAM_MPI_SESSION_SUFFIX: `bench-cr-${process.pid}`,
    SSI_BENCH_MPI_URL: mpiUrl,
  };
  delete env.SSI_BENCH_CPUS;
  const pin: string[] = [];
  if (opts.cpus) {
    env.SSI_BENCH_CPUS = opts.cpus.join(',');
    pin.push('-x', 'SSI_BENCH_CPUS');
  }
  const args = [mpirunPath(root), ...flags, '-x', 'SSI_BENCH_MPI_URL', ...pin, ...program];
  const t0 = nowNs();
  const child = spawn(process.execPath, args, {
    cwd: opts.cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const r = await runChild(child, opts.what, opts.timeoutMs, true);
  const wallMs = (nowNs() - t0) / 1e6;
  if (r.code !== 0)
    throw new Error(
      `${opts.what}: mpirun exited with ${r.code ?? r.signal}\n${(r.stdout + r.stderr).split('\n').slice(-30).join('\n')}`,
    );
  return { out: `${r.stdout}\n${r.stderr}`, wallMs };
}

export const load = () => Number(loadavg()[0]!.toFixed(2));

/** 1-minute load average at the start and end of each part (the machine is shared). */
export type LoadLog = Record<string, { start: number; end: number }>;

export async function runPingpong(root: string, plan: CrPlan, ckpt: string, loads: LoadLog) {
  const cols = [TCP, CRTCP];
  const samples = new Map(cols.map((c) => [c.key, plan.points.map(() => [] as number[])]));
  const cpuSamples = new Map(cols.map((c) => [c.key, plan.points.map(() => [] as number[])]));
  const program = join(root, 'programs', 'pingpong-mpi.mjs');
  const poll = plan.pollUs === null ? [] : ['--ssi', 'mpi_base_poll_us', String(plan.pollUs)];
  loads.pingpong = { start: load(), end: 0 };
  for (let round = 0; round < plan.reps; round++) {
    for (const c of round % 2 ? [...cols].reverse() : cols) {
      const r = await runMpirun(
        root,
        [...mpirunFlags(2, c, ckpt), ...poll],
        [program, ...driverArgs(1, plan.points)],
        {
          cwd: root,
          timeoutMs: 600_000,
          what: `ping-pong over ${c.title}`,
          cpus: plan.cpus,
        },
      );
      const got = parseDriverOutput(r.out.split('\n').map(stripRank).join('\n'), plan.points, 1);
      got.forEach((s, i) => {
        samples.get(c.key)![i]!.push(s.oneWayNs[0]!);
        if (s.cpuNs === undefined)
          throw new Error(`${program} printed no cpuNs: rebuild the bench`);
        cpuSamples.get(c.key)![i]!.push(s.cpuNs[0]!);
      });
      const first = got[0]!;
      process.stderr.write(
        `round ${round + 1}/${plan.reps} pingpong ${c.title.padEnd(14)} ${formatSize(first.size)}: ` +
          `${(first.oneWayNs[0]! / 1000).toFixed(1)} us (load ${load()})\n`,
      );
    }
  }
  loads.pingpong.end = load();
  return plan.points.map((point, i) => ({
    point,
    tcp: stat(samples.get('tcp')![i]!),
    crtcp: stat(samples.get('crtcp')![i]!),
    tcpCpu: stat(cpuSamples.get('tcp')![i]!),
    crtcpCpu: stat(cpuSamples.get('crtcp')![i]!),
  }));
}

export async function runHeat(root: string, plan: CrPlan, ckpt: string, loads: LoadLog) {
  const examples = join(root, '..', '..', 'examples');
  const cols = plan.heatColumns;
  const runs = new Map(cols.map((c) => [c.key, [] as (HeatRun & { wallMs: number })[]]));
  loads.heat = { start: load(), end: 0 };
  for (let round = 0; round < plan.reps; round++) {
    const order = cols.map((_, i) => cols[(i + round) % cols.length]!);
    for (const c of order) {
      const r = await runMpirun(
        root,
        mpirunFlags(plan.heatNp, c, ckpt),
        ['heat.ts', ...plan.heatArgs],
        {
          cwd: examples,
          timeoutMs: 600_000,
          what: `heat.ts over ${c.title}`,
        },
      );
      const h = parseHeatOutput(r.out);
      if (c.interval > 0 && h.checkpoints === 0)
        throw new Error(
          `heat.ts with ${c.title}: no checkpoint was taken in ${h.seconds} s (${h.notTaken.join('; ') || 'none refused'}): give heat more work (--heat-args)`,
        );
      runs.get(c.key)!.push({ ...h, wallMs: r.wallMs });
      process.stderr.write(
        `round ${round + 1}/${plan.reps} heat ${c.title.padEnd(16)} ${h.seconds.toFixed(2)} s, ` +
          `${h.checkpoints} checkpoint(s) (load ${load()})\n`,
      );
    }
  }
  loads.heat.end = load();
  const probes = new Set([...runs.values()].flat().map((h) => h.probe));
  if (probes.size !== 1)
    throw new Error(`heat.ts gave different answers across runs: ${[...probes].join(', ')}`);
  const rows: HeatRow[] = cols.map((c) => {
    const rs = runs.get(c.key)!;
    return {
      config: c,
      seconds: stat(rs.map((h) => h.seconds)),
      wallMs: stat(rs.map((h) => h.wallMs)),
      checkpoints: stat(rs.map((h) => h.checkpoints)),
    };
  });
  return { rows, runs: Object.fromEntries(runs) };
}

export async function runCoord(root: string, plan: CrPlan, ckpt: string, loads: LoadLog) {
  const program = join(root, 'programs', 'cr-coord.mjs');
  const rows: CoordRow[] = [];
  const samples: CoordSample[] = [];
  loads.coord = { start: load(), end: 0 };
  for (const np of plan.nps) {
    const r = await runMpirun(
      root,
      mpirunFlags(np, CRTCP, ckpt),
      [program, String(plan.warmupCheckpoints), String(plan.checkpoints)],
      { cwd: root, timeoutMs: 600_000, what: `${plan.checkpoints} checkpoints of ${np} rank(s)` },
    );
    const s = parseCoordOutput(r.out, np, plan.checkpoints);
    samples.push(s);
    const row = coordRow(s);
    rows.push(row);
    process.stderr.write(
      `coord np ${np}: median ${row.ms.median.toFixed(1)} ms (prepare ${row.phases.prepareMs.median.toFixed(1)}, ` +
        `drain+save ${row.phases.savedMs.median.toFixed(1)}, commit ${row.phases.commitMs.median.toFixed(1)}) (load ${load()})\n`,
    );
  }
  loads.coord.end = load();
  return { rows, samples };
}
