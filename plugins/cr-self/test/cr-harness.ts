import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Ran, runCli, startCli, waitChild, waitFor } from '@ssi/cli/testing';

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** A private checkpoint root for one test (removed by `cleanup`). */
export function checkpointRoot(): { root: string; cleanup(): void } {
  const root = mkdtempSync(join(tmpdir(), 'ssi-cr-test-'));
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** A job started through the built mpirun, with its output collected as it comes. */
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

  /** Waits until `n` lines of the output match `re`. */
  async lines(re: RegExp, n: number, what: string, timeoutMs = 60_000): Promise<void> {
    const count = () => this.out.split('\n').filter((l) => re.test(l)).length;
    await waitFor(
      what,
      () => count() >= n,
      timeoutMs,
      () => `; output so far:\n${this.out}`,
    );
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

export function startJob(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 120_000,
): RunningJob {
  return new RunningJob(startCli('mpirun', args, env), `mpirun ${args.join(' ')}`, timeoutMs);
}

export function lamcheckpoint(target: number | string): Promise<Ran> {
  return runCli('lamcheckpoint', [String(target)], process.env, { timeoutMs: 90_000 });
}

export function lamrestart(dir: string, args: string[] = []): Promise<Ran> {
  return runCli('lamrestart', [dir, ...args], process.env, { timeoutMs: 120_000 });
}

/** The one job directory under a checkpoint root. */
export function jobDir(root: string): string {
  const jobs = readdirSync(root);
  if (jobs.length !== 1)
    throw new Error(`expected one job directory in ${root}, found ${jobs.join(', ') || 'none'}`);
  return join(root, jobs[0]!);
}
