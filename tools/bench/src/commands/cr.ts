import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { benchRoot, sourceState, withDriverWorkDir } from '../drivers';
import { type BenchCommand, formatTable, nowNs, writeResults } from '../harness';
import {
  type LoadLog,
  load,
  mpirunPath,
  runCoord,
  runHeat,
  runMpirun,
  runPingpong,
} from './cr-jobs';
import { planCr, USAGE } from './cr-options';
import { planColumns, runPlans } from './cr-plans';
import { coordColumns, heatColumns, linearFit, pingColumns } from './cr-results';

function printLoads(loads: LoadLog): void {
  const parts = Object.entries(loads).map(([p, l]) => `${p} ${l.start} -> ${l.end}`);
  console.log(`\nMachine load (1-min average, start -> end of each part): ${parts.join('; ')}`);
}

export const crCommand: BenchCommand = {
  name: 'cr',
  summary:
    'checkpoint/restart: crtcp+cr self vs tcp, coordination time vs ranks, periodic checkpoints',
  usage: USAGE,
  async run(args) {
    const plan = planCr(args);
    const root = benchRoot();
    mpirunPath(root);
    return withDriverWorkDir('ssi-bench-cr-', 'the checkpoint benchmark', async (workDir) => {
      const ckpt = mkdtempSync(join(workDir, 'checkpoints-'));
      const loads: LoadLog = {};
      const result: Record<string, unknown> = {};
      const t0 = nowNs();
      console.log(`cr benchmark: parts ${plan.parts.join(', ')}; load at start ${load()}`);
      if (plan.parts.includes('pingpong')) {
        const rows = await runPingpong(root, plan, ckpt, loads);
        console.log(
          `\nPing-pong, 2 ranks: one-way time and bandwidth (median of ${plan.reps} rounds; ${plan.cpus ? `ranks pinned to CPUs ${plan.cpus.join(',')}` : 'not pinned'}; ` +
            `${plan.pollUs === null ? 'polling as each rank chose' : `mpi_base_poll_us ${plan.pollUs}`}; cpu: both ranks' CPU time per round trip)\n`,
        );
        console.log(formatTable(pingColumns(), rows));
        result.pingpong = rows.map((r) => ({
          ...r.point,
          oneWayNs: { tcp: r.tcp, crtcp: r.crtcp },
          crtcpOverTcp: r.crtcp.median / r.tcp.median,
          cpuNsPerRoundTrip: { tcp: r.tcpCpu, crtcp: r.crtcpCpu },
          crtcpOverTcpCpu: r.crtcpCpu.median / r.tcpCpu.median,
        }));
      }
      if (plan.heatColumns.length > 0) {
        const { rows, runs } = await runHeat(root, plan, ckpt, loads);
        console.log(
          `\nheat.ts ${plan.heatArgs.join(' ')} on ${plan.heatNp} ranks: its own time (median of ${plan.reps} rounds)\n`,
        );
        console.log(formatTable(heatColumns(rows), rows));
        result.heat = { rows, runs };
      }
      if (plan.parts.includes('coord')) {
        const { rows, samples } = await runCoord(root, plan, ckpt, loads);
        const fit = linearFit(
          rows.map((r) => r.np),
          rows.map((r) => r.phases.prepareMs.median + r.phases.savedMs.median),
        );
        console.log(
          `\nCoordination time of one checkpoint (median of ${plan.checkpoints}; coord = prepare + drain+save, ` +
            `request to every rank saved; total adds the commit), ms\n`,
        );
        console.log(formatTable(coordColumns(), rows));
        console.log(
          `\nfit: coord = ${fit.intercept.toFixed(1)} ms + ${fit.slope.toFixed(1)} ms per rank ` +
            '(target 50 ms + 2 ms per rank; the seed: 114 ms + 9 ms per rank)',
        );
        result.coord = { rows, samples, fit };
      }
      if (plan.parts.includes('plans')) {
        const p = plan.plansPart;
        loads.plans = { start: load(), end: 0 };
        const rows = await runPlans(
          {
            ...p,
            reps: plan.reps,
            program: join(root, 'programs', 'cr-plans.mjs'),
            checkpointRoot: mkdtempSync(join(workDir, 'plans-')),
            secondRoot: mkdtempSync(join(workDir, 'fileserver-')),
          },
          (flags, program, what) =>
            runMpirun(root, flags, program, { cwd: root, timeoutMs: 900_000, what }),
          (line) => process.stderr.write(`${line} (load ${load()})\n`),
        );
        loads.plans.end = load();
        console.log(
          `\nStorage plans, ${p.np} ranks (median of ${plan.reps} x ${p.checkpoints} checkpoints; complete = request to a ` +
            'complete series, held = the longest a rank waited from its onCheckpoint to its onContinue; bytes per checkpoint)\n',
        );
        console.log(formatTable(planColumns(), rows));
        result.plans = { options: p, rows };
      }
      printLoads(loads);
      console.log(`measured in ${((nowNs() - t0) / 1e9).toFixed(0)} s`);
      const file = writeResults('cr', {
        params: { ...plan, heatColumns: plan.heatColumns.map((c) => c.key) },
        loads,
        source: sourceState(root, [
          'packages/mpi',
          'plugins/rpi-tcp',
          'plugins/rpi-crtcp',
          'plugins/cr-self',
        ]),
        unit: {
          oneWayNs: 'round trip / 2 in ns, one sample per round',
          cpuNsPerRoundTrip:
            'user + system CPU time of both ranks per round trip, ns, one sample per round',
          heat: 'seconds: heat.ts own MPI.wtime time; wallMs: mpirun spawn to exit (boots a private universe)',
          coord: 'ms of the outcome of mpi.cr.checkpoint(); phases in ms (see CheckpointPhases)',
          plans:
            'ms: request to complete series; heldMs: longest onCheckpoint→onContinue of a rank; bytes per checkpoint',
        },
        ...result,
      });
      console.log(`\nresults: ${file}`);
      return 0;
    });
  },
};
