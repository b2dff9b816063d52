import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Ran, runCli, startCli, waitChild, waitFor } from '@ssi/cli/testing';

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** A private directory for one test: checkpoint root and the test checkpointer's control dir. */
export function workDir(): { root: string; ctl: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'ssi-cr-external-'));
  return {
    root: join(dir, 'ckpt'),
    ctl: dir,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The checkpoint command that runs the test checkpointer with control directory `ctl`. */
export function testCheckpointer(ctl: string): string {
  return `${process.execPath} ${join(FIXTURES, 'checkpointer.mjs')} {pid} {rank} {image} {series} ${ctl}`;
}

/** One call of the test checkpointer, as it recorded it. */
export interface Call {
  rank: number;
  pid: number;
  series: number;
  mode: string;
  sockets: string[];
  problems: string[];
}

export function calls(ctl: string): Call[] {
  const file = join(ctl, 'calls.log');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Call);
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

export function startJob(args: string[], env: NodeJS.ProcessEnv = process.env): RunningJob {
  return new RunningJob(startCli('mpirun', args, env), `mpirun ${args.join(' ')}`);
}

export function lamcheckpoint(target: number | string, env = process.env): Promise<Ran> {
  return runCli('lamcheckpoint', [String(target)], env, { timeoutMs: 90_000 });
}

/** The one job directory under a checkpoint root. */
export function jobDir(root: string): string {
  const jobs = readdirSync(root);
  if (jobs.length !== 1) {
    throw new Error(`expected one job directory in ${root}, found ${jobs.join(', ') || 'none'}`);
  }
  return join(root, jobs[0]!);
}
