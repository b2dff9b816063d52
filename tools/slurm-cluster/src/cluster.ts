import { type ChildProcess, execFile, spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { disown, own } from '@ssi/testbed';
import { findDaemons, shortHostname, slurmAvailable } from './available';
import { layout, slurmConf } from './config';
import { SlurmClusterError } from './errors';
import {
  alive,
  killUntilGone,
  killUntilGoneSync,
  MARKER,
  markedPids,
  markedProcesses,
  signal,
  waitGone,
} from './procs';

export interface StartSlurmClusterOptions {
  /** directory for every file of the cluster; created 0700, must be absent or empty. Default: a new `os.tmpdir()/ssi-slurm-XXXXXX` */
  dir?: string;
  /** CPUs the node offers (default 2) */
  cpus?: number;
  /** slurmctld and slurmd ports (default: two free ports found by the fixture) */
  ports?: { slurmctld: number; slurmd: number };
  /** how long the daemons may take until the node is idle (default 30 000 ms) */
  startTimeoutMs?: number;
  /** timeout of each Slurm client command the fixture runs (default 20 000 ms) */
  commandTimeoutMs?: number;
  /** keep the directory (logs, job output) after stop() (default false) */
  keepDir?: boolean;
}

export interface SbatchOptions {
  /** job name (`--job-name`) */
  name?: string;
  /** working directory of the job (default: the cluster directory) */
  cwd?: string;
  /** extra environment for the job, on top of this process's and the cluster's */
  env?: Record<string, string>;
  /** further sbatch options, e.g. `['--ntasks=2']` */
  args?: string[];
}

export interface SlurmJob {
  id: string;
  /** the script file sbatch was given */
  script: string;
  /** where the job's stdout and stderr go */
  output: string;
  /** the output so far ('' while none) */
  readOutput(): string;
}

export interface SlurmStep {
  /** `<job>.<step>`, e.g. `12.0` or `12.batch` */
  id: string;
  /** the step part: `0`, `batch`, `extern` */
  step: string;
  name: string;
  nodes: string;
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface SlurmCluster {
  dir: string;
  /** the node's name (this host's short name) */
  node: string;
  /** what a Slurm client (sbatch, srun, squeue, …) needs: `SLURM_CONF`, and the fixture's marker */
  env: Record<string, string>;
  ports: { slurmctld: number; slurmd: number };
  /** submit `script` (text; `#!/bin/bash` is prepended when it has no `#!` line) */
  sbatch(script: string, opts?: SbatchOptions): Promise<SlurmJob>;
  /** the job's state (`PENDING`, `RUNNING`, `COMPLETED`, `CANCELLED`, `FAILED`, …), undefined if unknown */
  jobState(jobId: string): Promise<string | undefined>;
  /**
   * Resolves with the state once the job is in `state` (or one of several); rejects (TIMEOUT)
   * after `timeoutMs`, or (JOB_STATE) as soon as the job ended in another state.
   */
  waitForState(jobId: string, state: string | string[], timeoutMs: number): Promise<string>;
  /** the job's steps as `squeue -s` lists them */
  squeueSteps(jobId: string): Promise<SlurmStep[]>;
  /** `scancel` (with `--signal` when given); does not wait */
  scancel(jobId: string, opts?: { signal?: string }): Promise<void>;
  /** run a Slurm client (or any) command with the cluster's environment and a timeout */
  exec(
    command: string,
    args: string[],
    opts?: { timeoutMs?: number; input?: string; env?: Record<string, string> },
  ): Promise<CommandResult>;
  /**
   * Cancel every job, stop slurmd, slurmctld and munged, kill whatever a job left behind, and
   * remove the directory. Idempotent.
   */
  stop(): Promise<void>;
}

const TERMINAL = new Set([
  'BOOT_FAIL',
  'CANCELLED',
  'COMPLETED',
  'DEADLINE',
  'FAILED',
  'NODE_FAIL',
  'OUT_OF_MEMORY',
  'PREEMPTED',
  'TIMEOUT',
]);

/** Two free TCP ports (held open together so they differ). */
async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<import('node:net').Server>((resolve, reject) => {
          const s = createServer();
          s.once('error', reject);
          s.listen({ host: '0.0.0.0', port: 0 }, () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

function prepareDir(dir: string | undefined): string {
  if (dir === undefined) return mkdtempSync(join(tmpdir(), 'ssi-slurm-'));
  if (/\s/.test(dir)) {
    throw new SlurmClusterError(
      'BAD_OPTIONS',
      `the cluster directory ${JSON.stringify(dir)} contains whitespace, which slurm.conf cannot name; choose another directory`,
    );
  }
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory() || readdirSync(dir).length > 0) {
      throw new SlurmClusterError(
        'BAD_OPTIONS',
        `${dir} is not an empty directory; give an absent or empty directory (the fixture removes it at stop)`,
      );
    }
  } else {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }
  return dir;
}

function tail(file: string, lines = 15): string {
  try {
    const all = readFileSync(file, 'utf8').trimEnd().split('\n');
    return all.slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** The environment for Slurm clients and daemons: ours, minus any Slurm job's, plus the cluster's. */
function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(SLURM_|SBATCH_|SRUN_|SALLOC_|SQUEUE_|SCANCEL_)/.test(k)) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  input?: string,
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      args,
      { env, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err && (err as { killed?: boolean }).killed) {
          reject(
            new SlurmClusterError(
              'COMMAND_FAILED',
              `${command} ${args.join(' ')} did not finish within ${timeoutMs / 1000} s (killed); stderr: ${String(stderr).trim() || '(empty)'}`,
            ),
          );
          return;
        }
        if (err && typeof (err as { code?: unknown }).code === 'string') {
          reject(
            new SlurmClusterError(
              'COMMAND_FAILED',
              `cannot run ${command}: ${(err as Error).message}`,
            ),
          );
          return;
        }
        const code = err ? Number((err as { code?: number }).code ?? 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
    else child.stdin?.end();
  });
}

interface Daemon {
  name: string;
  child: ChildProcess;
  log: string;
  exited?: { code: number | null; signal: NodeJS.Signals | null };
}

/**
 * Start a private one-node Slurm cluster: munged, slurmctld and slurmd, each in the foreground as
 * a child of this process, every file under one directory. Resolves once `sinfo` reports the node
 * idle; on failure everything started is stopped and the error carries the daemons' log tails.
 */
export async function startSlurmCluster(
  opts: StartSlurmClusterOptions = {},
): Promise<SlurmCluster> {
  const avail = slurmAvailable();
  if (!avail.ok) throw new SlurmClusterError('UNAVAILABLE', avail.reason);
  const cpus = opts.cpus ?? 2;
  if (!Number.isInteger(cpus) || cpus < 1 || cpus > 1024) {
    throw new SlurmClusterError(
      'BAD_OPTIONS',
      `cpus must be an integer from 1 to 1024, not ${cpus}`,
    );
  }
  const bins = findDaemons()!;
  const dir = prepareDir(opts.dir);
  const l = layout(dir);
  const startTimeoutMs = opts.startTimeoutMs ?? 30_000;
  const commandTimeoutMs = opts.commandTimeoutMs ?? 20_000;
  const node = shortHostname();
  const [p1, p2] = opts.ports ? [opts.ports.slurmctld, opts.ports.slurmd] : await freePorts(2);
  const ports = { slurmctld: p1!, slurmd: p2! };
  for (const d of [l.stateDir, l.spoolDir, l.jobsDir]) mkdirSync(d, { mode: 0o700 });
  writeFileSync(
    l.owner,
    `${JSON.stringify({ owner: { pid: process.pid }, ports, node, started: new Date().toISOString() })}\n`,
  );
  writeFileSync(
    l.conf,
    slurmConf(l, {
      clusterName: `ssi${process.pid}`,
      host: node,
      cpus,
      ctldPort: ports.slurmctld,
      slurmdPort: ports.slurmd,
    }),
  );
  const env = { SLURM_CONF: l.conf, [MARKER]: dir };
  const daemonEnv = baseEnv(env);
  const daemons: Daemon[] = [];
  let stopped = false;
  let stopping: Promise<void> | undefined;

  const startDaemon = (name: string, command: string, args: string[], log: string) => {
    const out = openSync(join(dir, `${name}.out`), 'a');
    const child = spawn(command, args, {
      env: daemonEnv,
      detached: true,
      stdio: ['ignore', out, out],
    });
    closeSync(out);
    const d: Daemon = { name, child, log };
    child.on('exit', (code, sig) => {
      d.exited = { code, signal: sig };
    });
    child.on('error', (err) => {
      d.exited = { code: -1, signal: null };
      writeFileSync(join(dir, `${name}.out`), `spawn failed: ${err.message}\n`, { flag: 'a' });
    });
    daemons.push(d);
    return d;
  };

  const describeDaemons = () =>
    daemons
      .map((d) => {
        const state = d.exited
          ? `exited (${d.exited.signal ?? `code ${d.exited.code}`})`
          : `running (pid ${d.child.pid})`;
        return `${d.name}: ${state}; log ${d.log}:\n${tail(d.log)}\n${d.name} stdout/stderr:\n${tail(join(dir, `${d.name}.out`), 5)}`;
      })
      .join('\n');

  const stopSync = () => {
    if (stopped) return;
    stopped = true;
    const daemonPids = daemons.flatMap((d) => (d.child.pid ? [d.child.pid] : []));
    killUntilGoneSync(() => [...daemonPids.filter(alive), ...markedPids(dir)], 5000);
    if (!opts.keepDir) rmSync(dir, { recursive: true, force: true });
    disown(handle);
  };
  const handle = { stopSync };
  own(handle);

  const exec: SlurmCluster['exec'] = (command, args, o = {}) =>
    run(
      command,
      args,
      baseEnv({ ...env, ...(o.env ?? {}) }),
      o.timeoutMs ?? commandTimeoutMs,
      o.input,
    );

  const must = async (command: string, args: string[]): Promise<string> => {
    const r = await exec(command, args);
    if (r.code !== 0) {
      throw new SlurmClusterError(
        'COMMAND_FAILED',
        `${command} ${args.join(' ')} failed (exit ${r.code}): ${r.stderr.trim() || r.stdout.trim() || '(no output)'}`,
      );
    }
    return r.stdout;
  };

  const stop = async (): Promise<void> => {
    if (stopped) return;
    if (stopping) return stopping;
    stopping = (async () => {
      // Jobs first, while slurmctld can still cancel them (and slurmd can kill their steps).
      const up = daemons.every((d) => !d.exited);
      if (up) {
        try {
          const ids = (await exec('squeue', ['-h', '-o', '%i'], { timeoutMs: 5000 })).stdout
            .split('\n')
            .map((s) => s.trim())
            .filter(Boolean);
          if (ids.length > 0) await exec('scancel', ids, { timeoutMs: 5000 });
          const deadline = Date.now() + 10_000;
          while (Date.now() < deadline) {
            const r = await exec('squeue', ['-h', '-o', '%i'], { timeoutMs: 5000 });
            if (r.stdout.trim() === '') break;
            await new Promise((res) => setTimeout(res, 200));
          }
        } catch {
          // the daemons are going anyway; the sweep below kills what is left
        }
      }
      for (const name of ['slurmd', 'slurmctld', 'munged']) {
        const d = daemons.find((x) => x.name === name);
        if (!d?.child.pid || d.exited) continue;
        signal(d.child.pid, 'SIGTERM');
        if (!(await waitGone([d.child.pid], 5000))) {
          signal(d.child.pid, 'SIGKILL');
          await waitGone([d.child.pid], 2000);
        }
      }
      // Whatever a job left behind (slurmstepds, tasks) carries the cluster's marker.
      await killUntilGone(() => markedPids(dir), 5000);
      const left = markedProcesses(dir);
      stopped = true;
      disown(handle);
      if (!opts.keepDir) rmSync(dir, { recursive: true, force: true });
      if (left.length > 0) {
        throw new SlurmClusterError(
          'COMMAND_FAILED',
          `processes of the cluster in ${dir} survived SIGKILL: ${left.map((p) => `${p.pid} ${p.cmd}`).join('; ')}`,
        );
      }
    })();
    return stopping;
  };

  try {
    const munged = startDaemon(
      'munged',
      bins.munged,
      [
        '--foreground',
        '--force',
        `--socket=${l.mungeSocket}`,
        `--pid-file=${l.mungePid}`,
        `--log-file=${l.mungeLog}`,
        `--seed-file=${l.mungeSeed}`,
      ],
      l.mungeLog,
    );
    await until(
      () => existsSync(l.mungeSocket) || !!munged.exited,
      startTimeoutMs,
      () => `munged's socket ${l.mungeSocket}`,
      describeDaemons,
    );
    if (munged.exited) throw startFailed(`munged exited at start`, describeDaemons());
    startDaemon('slurmctld', bins.slurmctld, ['-D', '-f', l.conf], l.ctldLog);
    startDaemon('slurmd', bins.slurmd, ['-D', '-f', l.conf], l.slurmdLog);
    let lastState = '';
    await untilAsync(
      async () => {
        if (daemons.some((d) => d.exited)) return true;
        const r = await exec('sinfo', ['-h', '-n', node, '-o', '%T'], { timeoutMs: 5000 }).catch(
          () => undefined,
        );
        lastState = r ? r.stdout.trim() || r.stderr.trim() : lastState;
        return lastState === 'idle';
      },
      startTimeoutMs,
      () => `node ${node} to be idle in sinfo (last: ${lastState || 'no answer'})`,
      describeDaemons,
    );
    const dead = daemons.find((d) => d.exited);
    if (dead) throw startFailed(`${dead.name} exited at start`, describeDaemons());
  } catch (err) {
    await stop().catch(() => {});
    if (err instanceof SlurmClusterError) throw err;
    throw startFailed((err as Error).message, '');
  }

  let jobSeq = 0;
  const cluster: SlurmCluster = {
    dir,
    node,
    env,
    ports,
    exec,
    stop,
    async sbatch(script, o = {}) {
      jobSeq++;
      const file = join(l.jobsDir, `job-${jobSeq}.sh`);
      const output = join(l.jobsDir, `job-${jobSeq}.out`);
      const text = script.startsWith('#!') ? script : `#!/bin/bash\n${script}`;
      writeFileSync(file, text.endsWith('\n') ? text : `${text}\n`, { mode: 0o700 });
      const args = [
        '--parsable',
        `--output=${output}`,
        `--chdir=${o.cwd ?? dir}`,
        ...(o.name ? [`--job-name=${o.name}`] : []),
        ...(o.args ?? []),
        file,
      ];
      const r = await exec('sbatch', args, { env: o.env });
      const id = r.stdout.trim().split(';')[0] ?? '';
      if (r.code !== 0 || !/^\d+$/.test(id)) {
        throw new SlurmClusterError(
          'COMMAND_FAILED',
          `sbatch ${args.join(' ')} failed (exit ${r.code}): ${r.stderr.trim() || r.stdout.trim() || '(no output)'}`,
        );
      }
      return {
        id,
        script: file,
        output,
        readOutput: () => (existsSync(output) ? readFileSync(output, 'utf8') : ''),
      };
    },
    async jobState(jobId) {
      const r = await exec('squeue', ['-h', '-t', 'all', '-j', jobId, '-o', '%T']);
      const s = r.stdout.trim();
      if (r.code === 0 && s) return s;
      const c = await exec('scontrol', ['-o', 'show', 'job', jobId]);
      return /JobState=(\S+)/.exec(c.stdout)?.[1];
    },
    async waitForState(jobId, state, timeoutMs) {
      const want = new Set(Array.isArray(state) ? state : [state]);
      const what = [...want].join(' or ');
      let last: string | undefined;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        last = await cluster.jobState(jobId);
        if (last && want.has(last)) return last;
        if (last && TERMINAL.has(last)) {
          const reason = /Reason=(\S+)/.exec(
            (await exec('scontrol', ['-o', 'show', 'job', jobId])).stdout,
          )?.[1];
          throw new SlurmClusterError(
            'JOB_STATE',
            `job ${jobId} ended ${last}${reason && reason !== 'None' ? ` (${reason})` : ''} while waiting for ${what}`,
          );
        }
        if (Date.now() > deadline) {
          const info = (await exec('scontrol', ['-o', 'show', 'job', jobId])).stdout.trim();
          const reason = /Reason=(\S+)/.exec(info)?.[1];
          throw new SlurmClusterError(
            'TIMEOUT',
            `job ${jobId} did not reach ${what} within ${timeoutMs / 1000} s (last state: ${last ?? 'unknown to squeue and scontrol'}${reason ? `, reason ${reason}` : ''})`,
          );
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    async squeueSteps(jobId) {
      const out = await must('squeue', ['-h', '-s', '-j', jobId, '-o', '%i|%j|%N']);
      return out
        .split('\n')
        .filter((line) => line.trim())
        .map((line) => {
          const [id = '', name = '', nodes = ''] = line.trim().split('|');
          return { id, step: id.slice(id.indexOf('.') + 1), name, nodes };
        });
    },
    async scancel(jobId, o = {}) {
      await must('scancel', [...(o.signal ? [`--signal=${o.signal}`] : []), jobId]);
    },
  };
  return cluster;
}

function startFailed(what: string, details: string): SlurmClusterError {
  return new SlurmClusterError(
    'START_FAILED',
    `the private Slurm cluster did not start: ${what}${details ? `\n${details}` : ''}`,
  );
}

async function until(
  ok: () => boolean,
  timeoutMs: number,
  what: () => string,
  details: () => string,
): Promise<void> {
  return untilAsync(async () => ok(), timeoutMs, what, details);
}

async function untilAsync(
  ok: () => Promise<boolean>,
  timeoutMs: number,
  what: () => string,
  details: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) {
      throw startFailed(`timed out after ${timeoutMs / 1000} s waiting for ${what()}`, details());
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
