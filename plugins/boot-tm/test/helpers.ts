import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** The stand-in for PBS's pbsdsh (see its header): NOT PBS. */
export const PBSDSH = join(import.meta.dirname, 'fixtures', 'pbsdsh');
export { jobsProgram as MPI_JOB } from '@ssi/mpi/testing';

/** `dist/bin/<command>.js` of the built @ssi/cli. */
export function cliBin(command: string): string {
  return join(dirname(require.resolve('@ssi/cli/package.json')), 'dist', 'bin', `${command}.js`);
}

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a command of @ssi/cli to completion; rejects (killing it) after `timeoutMs`. */
export function runCli(
  command: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<Ran> {
  return waitChild(startCli(command, args, env), `${command} ${args.join(' ')}`, timeoutMs);
}

export function startCli(command: string, args: string[], env: Record<string, string>) {
  return spawn(process.execPath, [cliBin(command), ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export function waitChild(child: ChildProcess, what: string, timeoutMs: number): Promise<Ran> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d) => {
      stdout += d;
    });
    child.stderr?.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} did not finish within ${timeoutMs} ms; output so far:\n${stderr}`));
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export interface JobProcess {
  pid: number;
  cmdline: string;
}

/**
 * Every live process that belongs to PBS job `jobId`: what a MOM tracks. The stand-in PBS job's
 * processes (lamboot, the pbsdsh launchers, the tasks on the nodes, the lamds and what they
 * started) all carry PBS_JOBID=<jobId> in their environment.
 */
export function jobProcesses(jobId: string): JobProcess[] {
  const marker = `\0PBS_JOBID=${jobId}\0`;
  const out: JobProcess[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (/\) [ZX] /.test(stat)) continue;
      const environ = `\0${readFileSync(`/proc/${name}/environ`, 'utf8')}`;
      if (!environ.includes(marker)) continue;
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      out.push({ pid: Number(name), cmdline });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The environment variable `name` of process `pid`, or undefined. */
export function envOf(pid: number, name: string): string | undefined {
  const entry = readFileSync(`/proc/${pid}/environ`, 'utf8')
    .split('\0')
    .find((e) => e.startsWith(`${name}=`));
  return entry?.slice(name.length + 1);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until true; fails naming `what` (and what `detail` says) after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => boolean,
  timeoutMs = 15_000,
  detail: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} ${detail()}`.trim());
    await sleep(50);
  }
}
