import type { ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Ran, runCli, startCli, waitChild } from './cli-process';
import { waitFor } from './wait-for';

/** A job started through the built mpirun, with its output (stdout and stderr) collected as it comes. */
export class RunningJob {
  out = '';
  readonly done: Promise<Ran>;
  constructor(
    readonly child: ChildProcess,
    what: string,
    timeoutMs = 120_000,
  ) {
    child.stdout?.on('data', (d) => {
      this.out += d;
    });
    child.stderr?.on('data', (d) => {
      this.out += d;
    });
    this.done = waitChild(child, what, timeoutMs);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Waits until `n` lines of the output match `re`; fails naming `what`, with the output. */
  async lines(re: RegExp, n: number, what: string, timeoutMs = 60_000): Promise<void> {
    const count = () => this.out.split('\n').filter((l) => re.test(l)).length;
    await waitFor(
      what,
      () => count() >= n,
      timeoutMs,
      () => `; output so far:\n${this.out}`,
    );
  }

  /** SIGKILL of mpirun if it still runs (for afterEach: a failed test leaves no job behind). */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

/** Starts `mpirun args` in `env`; it is killed and `done` rejects after `timeoutMs`. */
export function startJob(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 120_000,
): RunningJob {
  return new RunningJob(startCli('mpirun', args, env), `mpirun ${args.join(' ')}`, timeoutMs);
}

/** `lamcheckpoint <target>` (a pid of mpirun or a job id) to completion, 90 s at most. */
export function lamcheckpoint(target: number | string, env = process.env): Promise<Ran> {
  return runCli('lamcheckpoint', [String(target)], env, { timeoutMs: 90_000 });
}

/** `lamrestart <dir> args…` to completion, 120 s at most. */
export function lamrestart(dir: string, args: string[] = [], env = process.env): Promise<Ran> {
  return runCli('lamrestart', [dir, ...args], env, { timeoutMs: 120_000 });
}

/** The one job directory under a checkpoint root; fails naming what it found instead. */
export function jobDir(root: string): string {
  const jobs = readdirSync(root);
  if (jobs.length !== 1) {
    throw new Error(`expected one job directory in ${root}, found ${jobs.join(', ') || 'none'}`);
  }
  return join(root, jobs[0]!);
}
