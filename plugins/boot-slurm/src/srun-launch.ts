import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type BootNode,
  describeBootNode,
  type HbootConfig,
  LamError,
  outputTail,
  runAgent,
} from '@ssi/lam';

/**
 * lamboot's side of starting lamds with srun: one job step for every node,
 * `srun --nodes=N --ntasks=N --ntasks-per-node=1 --kill-on-bad-exit=1 … slurm-lamd.js`, so
 * that Slurm tracks, accounts for and kills every lamd. The step is left running (it is the
 * universe); its output goes to a private log that explains a failure.
 */
export class SrunLauncher {
  private dir: string | undefined;
  private child: ChildProcess | undefined;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private spawnError: NodeJS.ErrnoException | undefined;
  private readonly onEnd = new Set<() => void>();
  private allUp = false;

  constructor(
    private readonly launcher: string[],
    private readonly program: string,
  ) {}

  get name(): string {
    return this.launcher.join(' ');
  }

  private argv(nodes: BootNode[], name: string): string[] {
    const n = nodes.length;
    return [
      ...this.launcher,
      `--nodes=${n}`,
      `--ntasks=${n}`,
      '--ntasks-per-node=1',
      `--nodelist=${nodes.map((x) => x.name).join(',')}`,
      '--kill-on-bad-exit=1',
      // later steps of the job (the user's own sruns) may share these nodes' CPUs
      '--overlap',
      '--input=all',
      `--job-name=${name}`,
      process.execPath,
      this.program,
    ];
  }

  /** Starts the lamds of `nodes` in one step; resolves once srun runs. */
  startLamds(nodes: BootNode[], configs: Record<string, HbootConfig>): Promise<void> {
    this.dir = mkdtempSync(join(tmpdir(), 'ssi-boot-slurm-'));
    const log = join(this.dir, 'srun.log');
    const fd = openSync(log, 'w', 0o600);
    const [cmd, ...args] = this.argv(nodes, 'ssi-lamd');
    let child: ChildProcess;
    try {
      // its own session: the end of lamboot is not the end of the step
      child = spawn(cmd!, args, { detached: true, stdio: ['pipe', fd, fd] });
    } finally {
      closeSync(fd);
    }
    this.child = child;
    child.stdin!.on('error', () => {});
    child.stdin!.end(`${JSON.stringify(configs)}\n`);
    child.unref();
    return new Promise((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', (err) => {
        this.spawnError = err;
        for (const f of this.onEnd) f();
        reject(this.cannotRun(err));
      });
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        for (const f of this.onEnd) f();
      });
    });
  }

  private cannotRun(err: NodeJS.ErrnoException): LamError {
    return new LamError(
      'LAUNCH_FAILED',
      `cannot run "${this.name}" (boot_slurm_launcher): ${err.code === 'ENOENT' ? 'not found' : err.message}`,
    );
  }

  /** The output of the step so far (srun's messages and the tasks'). */
  output(): string {
    try {
      return this.dir ? readFileSync(join(this.dir, 'srun.log'), 'utf8') : '';
    } catch {
      return '';
    }
  }

  /** Rejects when the step ends before every lamd called back; never resolves otherwise. */
  failure(): Promise<never> {
    return new Promise((_, reject) => {
      const check = () => {
        if (this.allUp) return;
        if (this.spawnError) reject(this.cannotRun(this.spawnError));
        else if (this.exit) {
          const how = this.exit.signal ?? `exit ${this.exit.code}`;
          reject(
            new LamError(
              'LAUNCH_FAILED',
              `${this.launcher[0]} ended (${how}) before the lamd called back: ${outputTail(this.output())}`,
            ),
          );
        }
      };
      this.onEnd.add(check);
      check();
    });
  }

  /** Every lamd called back: the step is Slurm's business from now on. */
  markAllUp(): void {
    this.allUp = true;
  }

  /** recon / wipe on one node: a one-task step, run to completion. */
  async run(
    node: BootNode,
    config: HbootConfig,
    timeoutMs: number,
  ): Promise<{ stdout: string; stderr: string }> {
    const argv = this.argv([node], `ssi-${config.mode}`);
    const r = await runAgent(argv, `${JSON.stringify({ [node.name]: config })}\n`, timeoutMs);
    if (r.spawnError) throw this.cannotRun({ message: r.spawnError } as NodeJS.ErrnoException);
    if (r.timedOut) {
      throw new LamError(
        'TIMEOUT',
        `${this.launcher[0]} on ${describeBootNode(node)} did not finish within ${timeoutMs / 1000} s (boot_base_timeout)`,
      );
    }
    if (r.code !== 0) {
      throw new LamError(
        'LAUNCH_FAILED',
        `${config.mode} on ${describeBootNode(node)} through ${this.launcher[0]} failed (${r.signal ?? `exit ${r.code}`}): ${outputTail(r.stderr || r.stdout)}`,
      );
    }
    return { stdout: r.stdout, stderr: r.stderr };
  }

  /**
   * End of the boot: a step whose lamds did not all call back is ended (SIGTERM to srun, which
   * Slurm turns into the end of the step on every node); the private log goes.
   */
  finish(): void {
    const child = this.child;
    if (child?.pid && !this.allUp && !this.exit && !this.spawnError) {
      try {
        process.kill(child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}
