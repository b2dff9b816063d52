import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { type MpiRunner, ompiRunner, runChild, ssiRunner, track } from '../drivers';
import {
  ompiFlags,
  type PingPongColumn,
  type PingPongPlan,
  SM_WAIT,
  VARIANT_PARAMS,
} from './pingpong-plan';

/** Waits for a line starting with `prefix` on a child's stdout. */
function firstLine(child: ChildProcess, prefix: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(
      () => reject(new Error(`no "${prefix}" line within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onData = (d: Buffer) => {
      buf += d.toString();
      const l = buf.split('\n').find((x) => x.startsWith(prefix));
      if (l !== undefined) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve(l.slice(prefix.length).trim());
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before printing "${prefix}"`));
    });
  });
}

/** How one column runs one round: resolves with the driver's stdout. */
export type Runner = (args: string[], timeoutMs: number) => Promise<string>;

/** Ping-pong drivers always run 2 ranks. */
const twoRanks =
  (run: MpiRunner): Runner =>
  (args, timeoutMs) =>
    run(2, args, timeoutMs);

/**
 * What every driver gets: SSI_BENCH_CPUS set to the plan's CPUs (or removed) and
 * SSI_BENCH_WARMUP_MS.
 */
function cpuEnv(plan: PingPongPlan): Record<string, string> {
  const warmup = { SSI_BENCH_WARMUP_MS: String(plan.warmupMs) };
  return plan.cpus ? { SSI_BENCH_CPUS: plan.cpus.join(','), ...warmup } : warmup;
}

/**
 * The MPI drivers' environment (the test launcher passes no SSI_* variable of its own on):
 * placement, --prepost, and SSI_BENCH_RAW_POLL for the paired mode's raw blocks.
 */
function mpiEnv(plan: PingPongPlan): Record<string, string> {
  return {
    ...cpuEnv(plan),
    ...(plan.prepost ? { SSI_BENCH_PREPOST: '1' } : {}),
    ...(process.env.SSI_BENCH_RAW_POLL === '1' ? { SSI_BENCH_RAW_POLL: '1' } : {}),
  };
}

function envWith(plan: PingPongPlan): NodeJS.ProcessEnv {
  const env = { ...process.env, ...cpuEnv(plan) };
  if (!plan.cpus) delete env.SSI_BENCH_CPUS;
  return env;
}

/**
 * The raw socket columns: over TCP on 127.0.0.1, or with `unixDir` over a Unix-domain socket in
 * that directory (a fresh path per round: the run's own temporary directory, so concurrent runs
 * never share one).
 */
export function rawRunner(
  root: string,
  maxSize: number,
  plan: PingPongPlan,
  unixDir?: string,
): { run: Runner; info: Record<string, unknown> } {
  const program = join(root, 'programs', 'pingpong-raw.mjs');
  let round = 0;
  const run: Runner = async (args, timeoutMs) => {
    const where = unixDir ? [join(unixDir, `raw-unix-${round++}.sock`)] : [];
    const echo = track(
      spawn(process.execPath, [program, 'echo', String(maxSize), ...where], {
        stdio: ['ignore', 'pipe', 'inherit'],
        env: envWith(plan),
      }),
    );
    try {
      const port = await firstLine(echo, 'PORT', 15_000);
      const ping = spawn(process.execPath, [program, 'ping', port, ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: envWith(plan),
      });
      const r = await runChild(ping, 'raw socket ping-pong', timeoutMs);
      if (r.code !== 0)
        throw new Error(`raw socket ping-pong exited with ${r.code ?? r.signal}\n${r.stderr}`);
      return r.stdout;
    } finally {
      // The echo side exits when the connection closes; make sure.
      if (echo.exitCode === null && echo.signalCode === null) {
        const gone = new Promise((res) => echo.once('exit', res));
        const t = setTimeout(() => echo.kill('SIGKILL'), 2000);
        await gone;
        clearTimeout(t);
      }
    }
  };
  return { run, info: { program, family: unixDir ? 'unix' : 'tcp' } };
}

/** Every column's runner, what the results record of it, and the columns that cannot run here. */
export interface ColumnRunners {
  runners: Partial<Record<PingPongColumn, Runner>>;
  info: Record<string, unknown>;
  skipped: Record<string, string>;
}

/**
 * Sets up how each of the plan's columns runs: the MPI columns through `mpirun` of @ssi/mpi with
 * their parameters, the raw loops as two plain Node processes, Open MPI through its `mpirun` (a
 * column skipped, with the reason, where Open MPI is not installed).
 */
export async function columnRunners(
  plan: PingPongPlan,
  root: string,
  workDir: string,
): Promise<ColumnRunners> {
  const maxSize = Math.max(1, ...plan.points.map((p) => p.size));
  const out: ColumnRunners = { runners: {}, info: {}, skipped: {} };
  const mpiColumn = async (c: PingPongColumn, params: Record<string, string | number>) => {
    const t = await ssiRunner(root, 'pingpong-mpi.mjs', params, mpiEnv(plan));
    out.runners[c] = twoRanks(t.run);
    out.info[c] = t.info;
  };
  for (const c of plan.columns) {
    const wait = SM_WAIT[c];
    const variant = VARIANT_PARAMS[c];
    if (wait !== undefined) await mpiColumn(c, { rpi: 'sm', rpi_sm_wait: wait });
    else if (variant !== undefined) await mpiColumn(c, variant);
    else if (c === 'tcp' || c === 'crtcp' || c === 'paired')
      await mpiColumn(c, { rpi: c === 'crtcp' ? 'crtcp' : 'tcp' });
    else if (c === 'raw' || c === 'raw-unix') {
      const t = rawRunner(root, maxSize, plan, c === 'raw-unix' ? workDir : undefined);
      out.runners[c] = t.run;
      out.info[c] = t.info;
    } else openMpiColumn(plan, root, workDir, out);
  }
  return out;
}

function openMpiColumn(plan: PingPongPlan, root: string, workDir: string, out: ColumnRunners) {
  process.stderr.write('compiling c/pingpong.c with mpicc ...\n');
  const flags = () => ompiFlags(plan.cpus, plan.prepost, plan.rpi === 'sm');
  const t = ompiRunner(root, 'pingpong', workDir, flags, { ...envWith(plan), ...mpiEnv(plan) });
  if ('skip' in t) {
    out.skipped.ompi = t.skip;
    process.stderr.write(`Open MPI column skipped: ${t.skip}\n`);
  } else {
    out.runners.ompi = twoRanks(t.run);
    out.info.ompi = { ...t.info, flags: flags() };
  }
}
