import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { BIND_POLICIES } from '../binding/bind-plan';
import { type Binding, type BindRequest, JobBinder } from '../binding/job-binder';
import { LamError } from '../errors';
import { procStartTime } from '../session/proc-identity';
import type { OobAddress } from '../wire/wire';
import type { LamdLog } from './lamd-log';

/** What to start: the argv, and optionally where and with which extra environment. */
export interface SpawnRequest {
  argv: string[];
  cwd?: string;
  env?: Record<string, string>;
  /**
   * The job the process belongs to (`mpirun`'s job id). When the job's last process on this
   * node has exited, the lamd removes the job's node-local resources (`jobResourcePrefix`).
   */
  job?: string;
  /**
   * Bind the process to CPUs of its own (`mpirun --bind-to`): its job's policy and its place among
   * the job's processes on this node. Needs `job` (the plan is per job).
   */
  bind?: BindRequest;
}

/** A started process: its pid and, when binding was asked for, what it got. */
export interface Started {
  pid: number;
  binding?: Binding;
}

export interface ExitStatus {
  code: number | null;
  signal: string | null;
}

export interface ProcRecord {
  pid: number;
  argv: string[];
  owner: OobAddress;
  startedAt: number;
  job?: string;
}

/** Where output and exits of started processes go (the lamd routes them to the owner). */
export interface ProcessSink {
  output(owner: OobAddress, pid: number, fd: 1 | 2, data: Buffer): void;
  exit(owner: OobAddress, pid: number, status: ExitStatus): void;
  /** The last process of `job` started here has exited (normally or killed). */
  jobEnded(job: string): void;
}

interface Running {
  child: ChildProcess;
  record: ProcRecord;
  closed: Promise<void>;
}

/**
 * The processes a lamd started. Each runs in its own process group (so a signal reaches what it
 * forks too) and has a record file in the session directory, which `wipe` and the reaper use
 * when the lamd itself is gone.
 */
export class ProcessTable {
  private readonly running = new Map<number, Running>();

  constructor(
    private readonly opts: {
      procsDir: string;
      env: () => Record<string, string>;
      log: LamdLog;
      sink: ProcessSink;
      /** Places bound processes (default: one that reads this node's CPUs and uses taskset). */
      binder?: JobBinder;
    },
  ) {
    this.binder = opts.binder ?? new JobBinder();
  }

  private readonly binder: JobBinder;

  spawn(req: SpawnRequest, owner: OobAddress): Promise<Started> {
    const file = req.argv[0]!;
    const cwd = usableDir(req.cwd) ?? homedir();
    const env = { ...this.opts.env(), ...req.env };
    const bound = this.binder.bind(req.job, req.bind, req.argv, { path: env.PATH ?? '', cwd });
    const [command, ...args] = bound.argv;
    const child = spawn(command!, args, {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new Promise((resolve, reject) => {
      child.once('error', (err: NodeJS.ErrnoException) => {
        if (child.pid !== undefined) return; // an error after start is reported as the exit
        if (req.job !== undefined && !this.liveJobs().has(req.job)) this.binder.jobEnded(req.job);
        reject(new LamError('REMOTE', `cannot start "${file}": ${describeSpawnError(err)}`));
      });
      child.once('spawn', () => {
        const pid = this.track(child, req, owner);
        resolve(bound.binding ? { pid, binding: bound.binding } : { pid });
      });
    });
  }

  private track(child: ChildProcess, req: SpawnRequest, owner: OobAddress): number {
    const pid = child.pid!;
    const record: ProcRecord = { pid, argv: req.argv, owner, startedAt: Date.now() };
    if (req.job !== undefined) record.job = req.job;
    const recordFile = join(this.opts.procsDir, String(pid));
    try {
      writeFileSync(recordFile, `${pid} ${procStartTime(pid) ?? ''}\n`, { mode: 0o600 });
    } catch (err) {
      this.opts.log.warn(`cannot record process ${pid}: ${(err as Error).message}`);
    }
    const { sink } = this.opts;
    child.stdout!.on('data', (d: Buffer) => sink.output(owner, pid, 1, d));
    child.stderr!.on('data', (d: Buffer) => sink.output(owner, pid, 2, d));
    const closed = new Promise<void>((done) => {
      // 'close' comes after both output streams ended: the exit is reported after all output.
      child.once('close', (code, signal) => {
        this.running.delete(pid);
        rmSync(recordFile, { force: true });
        this.opts.log.debug(`process ${pid} exited (code ${code}, signal ${signal})`);
        sink.exit(owner, pid, { code, signal });
        if (record.job !== undefined && !this.liveJobs().has(record.job)) {
          this.binder.jobEnded(record.job);
          sink.jobEnded(record.job);
        }
        done();
      });
    });
    this.running.set(pid, { child, record, closed });
    this.opts.log.debug(`started ${pid}: ${req.argv.join(' ')}`);
    return pid;
  }

  signal(pid: number, signal: NodeJS.Signals): void {
    if (!this.running.has(pid)) {
      throw new LamError('BAD_ARGS', `process ${pid} was not started by this lamd (or has exited)`);
    }
    killGroup(pid, signal);
  }

  list(): ProcRecord[] {
    return [...this.running.values()].map((r) => r.record);
  }

  /** The jobs that still have a running process here. */
  liveJobs(): Set<string> {
    const jobs = new Set<string>();
    for (const r of this.running.values()) if (r.record.job !== undefined) jobs.add(r.record.job);
    return jobs;
  }

  get size(): number {
    return this.running.size;
  }

  /** SIGTERM every process group, SIGKILL what is left after `graceMs`. Returns how many. */
  async killAll(graceMs: number): Promise<number> {
    const all = [...this.running.values()];
    if (all.length === 0) return 0;
    for (const r of all) killGroup(r.record.pid, 'SIGTERM');
    const allClosed = Promise.all(all.map((r) => r.closed));
    if (!(await settlesWithin(allClosed, graceMs))) {
      for (const r of this.running.values()) killGroup(r.record.pid, 'SIGKILL');
      await settlesWithin(allClosed, 2000);
    }
    return all.length;
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal); // the group is gone but the leader may not be
    } catch {
      // already gone
    }
  }
}

function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    p.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

function usableDir(dir: string | undefined): string | undefined {
  try {
    return dir && existsSync(dir) && statSync(dir).isDirectory() ? dir : undefined;
  } catch {
    return undefined;
  }
}

function describeSpawnError(err: NodeJS.ErrnoException): string {
  if (err.code === 'ENOENT') return 'no such program (not found on PATH)';
  if (err.code === 'EACCES') return 'permission denied (not executable)';
  return err.message;
}

/** Checks a spawn request that came over the network. */
export function spawnRequestProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return 'spawn needs { argv, cwd?, env?, job? }';
  const r = value as Record<string, unknown>;
  if (
    !Array.isArray(r.argv) ||
    r.argv.length === 0 ||
    !r.argv.every((a) => typeof a === 'string')
  ) {
    return 'argv must be a non-empty list of strings';
  }
  if ((r.argv[0] as string).length === 0) return 'argv[0] is empty';
  if (r.cwd !== undefined && r.cwd !== null && typeof r.cwd !== 'string')
    return 'cwd must be a string';
  if (r.job !== undefined && r.job !== null && (typeof r.job !== 'string' || r.job === ''))
    return 'job must be a non-empty string (a job id)';
  if (r.bind !== undefined && r.bind !== null) {
    const problem = bindRequestProblem(r.bind);
    if (problem) return problem;
  }
  if (r.env !== undefined && r.env !== null) {
    if (typeof r.env !== 'object' || Array.isArray(r.env)) return 'env must be a map of strings';
    if (!Object.values(r.env).every((v) => typeof v === 'string'))
      return 'env values must be strings';
  }
  return undefined;
}

function bindRequestProblem(value: unknown): string | undefined {
  const b = value as Record<string, unknown>;
  if (typeof b !== 'object' || Array.isArray(b)) return 'bind must be { to, slot, of }';
  if (!BIND_POLICIES.includes(b.to as never))
    return `bind.to must be one of ${BIND_POLICIES.join(', ')}, got ${JSON.stringify(b.to)}`;
  const slot = b.slot as number;
  const of = b.of as number;
  if (!Number.isInteger(of) || of < 1) return 'bind.of must be a positive integer (processes here)';
  if (!Number.isInteger(slot) || slot < 0 || slot >= of)
    return `bind.slot must be an integer from 0 to bind.of - 1 (${of - 1}), got ${JSON.stringify(slot)}`;
  const over = b.oversubscribed;
  if (over !== undefined && !(Number.isInteger(over) && (over as number) >= 0))
    return `bind.oversubscribed must be a whole number of ranks a CPU >= 0, got ${JSON.stringify(over)}`;
  return undefined;
}
