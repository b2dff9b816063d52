import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BootNode, describeBootNode, type HbootConfig, LamError, outputTail } from '@ssi/lam';
import type { PbsJob } from './pbs-env';

interface Launch {
  node: BootNode;
  child: ChildProcess;
  log: string;
  up: boolean;
  exit?: { code: number | null; signal: NodeJS.Signals | null };
  spawnError?: string;
  onExit: Set<() => void>;
}

/**
 * lamboot's side of starting lamds through PBS's task manager: one launcher process per node
 * (`pbsdsh -h <node> <node> <tm-lamd.js> <config file>`), left running — it is PBS's handle on
 * the task — and watched until the node's lamd has called back.
 */
export class TmLauncher {
  private dir: string | undefined;
  private readonly launches = new Map<BootNode, Launch>();

  constructor(
    private readonly launcher: string[],
    private readonly spoolRoot: string,
    private readonly job: PbsJob,
    private readonly program: string,
  ) {}

  /** The launcher as the user configured it, for messages. */
  get name(): string {
    return this.launcher.join(' ');
  }

  /** Creates this boot's private spool directory (mode 0700) under boot_tm_spool_dir. */
  prepare(): void {
    const safeJob = this.job.jobId.replace(/[^A-Za-z0-9._-]/g, '_');
    try {
      mkdirSync(this.spoolRoot, { recursive: true, mode: 0o700 });
      const dir = join(
        this.spoolRoot,
        `${safeJob}.${process.pid}.${randomBytes(4).toString('hex')}`,
      );
      mkdirSync(dir, { mode: 0o700 });
      this.dir = dir;
    } catch (err) {
      throw new LamError(
        'BAD_CONFIG',
        `cannot create the tm spool directory under ${this.spoolRoot}: ${(err as Error).message}; set boot_tm_spool_dir to a directory all nodes of the job share`,
      );
    }
  }

  private files(node: BootNode) {
    if (!this.dir) this.prepare();
    const base = join(this.dir!, `n${node.id}`);
    return { config: `${base}.json`, log: `${base}.log` };
  }

  private argv(node: BootNode, configFile: string): string[] {
    return [...this.launcher, '-h', node.name, process.execPath, this.program, configFile];
  }

  /**
   * Starts the launcher for one node's lamd and resolves as soon as it runs; it is not waited
   * for (a PBS task lives as long as its lamd). A launcher that cannot be run is an error
   * naming the node.
   */
  startLamd(node: BootNode, config: HbootConfig): Promise<void> {
    const { config: file, log } = this.files(node);
    writeFileSync(file, `${JSON.stringify(config)}\n`, { mode: 0o600 });
    const fd = openSync(log, 'w', 0o600);
    const [cmd, ...args] = this.argv(node, file);
    let child: ChildProcess;
    try {
      child = spawn(cmd!, args, { detached: true, stdio: ['ignore', fd, fd] });
    } finally {
      closeSync(fd);
    }
    const launch: Launch = { node, child, log, up: false, onExit: new Set() };
    this.launches.set(node, launch);
    child.unref();
    return new Promise((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', (err) => {
        launch.spawnError = err.message;
        rmSync(file, { force: true });
        for (const f of launch.onExit) f();
        reject(this.cannotRun(node, err));
      });
      child.once('exit', (code, signal) => {
        launch.exit = { code, signal };
        for (const f of launch.onExit) f();
      });
    });
  }

  private cannotRun(node: BootNode, err: NodeJS.ErrnoException): LamError {
    const why = err.code === 'ENOENT' ? 'not found' : err.message;
    return new LamError(
      'LAUNCH_FAILED',
      `cannot run the PBS launcher "${this.name}" to start the lamd on ${describeBootNode(node)}: ${why}; ` +
        'inside a PBS job pbsdsh is on PATH; set boot_tm_launcher to where it is',
    );
  }

  /** Rejects when `node`'s launcher ends before its lamd is up; never resolves otherwise. */
  failure(node: BootNode): Promise<never> {
    const launch = this.launches.get(node);
    return new Promise((_, reject) => {
      if (!launch) return;
      const check = () => {
        if (launch.up) return;
        if (launch.spawnError) {
          reject(this.cannotRun(node, { message: launch.spawnError } as NodeJS.ErrnoException));
          return;
        }
        if (!launch.exit) return;
        const how = launch.exit.signal ?? `status ${launch.exit.code}`;
        let output = '';
        try {
          output = readFileSync(launch.log, 'utf8');
        } catch {
          // the log is gone with the spool directory
        }
        reject(
          new LamError(
            'LAUNCH_FAILED',
            `${this.name} -h ${node.name} ended (${how}) before the lamd on ${describeBootNode(node)} called back: ${outputTail(output)}`,
          ),
        );
      };
      launch.onExit.add(check);
      check();
    });
  }

  /** The node's lamd called back: from now on its launcher is PBS's business. */
  markUp(node: BootNode): void {
    const launch = this.launches.get(node);
    if (launch) launch.up = true;
  }

  /**
   * recon / wipe: run the launcher to completion and return what the node program printed.
   */
  async run(
    node: BootNode,
    config: HbootConfig,
    timeoutMs: number,
  ): Promise<{ stdout: string; stderr: string }> {
    const { config: file } = this.files(node);
    writeFileSync(file, `${JSON.stringify(config)}\n`, { mode: 0o600 });
    const [cmd, ...args] = this.argv(node, file);
    try {
      const r = await new Promise<{
        code: number | null;
        signal: string | null;
        stdout: string;
        stderr: string;
        error?: NodeJS.ErrnoException;
        timedOut: boolean;
      }>((resolve) => {
        const child = spawn(cmd!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        let timedOut = false;
        let error: NodeJS.ErrnoException | undefined;
        child.stdout.on('data', (d) => {
          stdout += d;
        });
        child.stderr.on('data', (d) => {
          stderr += d;
        });
        const timer = setTimeout(() => {
          timedOut = true;
          child.kill('SIGTERM');
        }, timeoutMs);
        child.on('error', (e) => {
          error = e;
        });
        child.on('close', (code, signal) => {
          clearTimeout(timer);
          resolve({ code, signal, stdout, stderr, error, timedOut });
        });
      });
      if (r.error) throw this.cannotRun(node, r.error);
      if (r.timedOut) {
        throw new LamError(
          'TIMEOUT',
          `${this.name} -h ${node.name} did not finish within ${timeoutMs / 1000} s`,
        );
      }
      if (r.code !== 0) {
        throw new LamError(
          'LAUNCH_FAILED',
          `${config.mode} on ${describeBootNode(node)} through ${this.name} failed (${r.signal ?? `status ${r.code}`}): ${outputTail(r.stderr || r.stdout)}`,
        );
      }
      return { stdout: r.stdout, stderr: r.stderr };
    } finally {
      rmSync(file, { force: true });
    }
  }

  /**
   * End of the boot. Launchers whose lamd never called back (the boot failed) are sent
   * SIGTERM — pbsdsh passes it to the task, as PBS would — and the spool directory goes.
   */
  finish(): void {
    for (const launch of this.launches.values()) {
      if (!launch.up && !launch.exit && !launch.spawnError && launch.child.pid) {
        try {
          process.kill(launch.child.pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
    }
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}
