import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

export { jobsProgram as MPI_JOB } from '@ssi/mpi/testing';

/** `dist/bin/<command>.js` of the built @ssi/cli. */
export function cliBin(command: string): string {
  return join(dirname(require.resolve('@ssi/cli/package.json')), 'dist', 'bin', `${command}.js`);
}

export interface Ran {
  code: number | null;
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
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliBin(command), ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The environment variable `name` of process `pid`, or undefined. */
export function envOf(pid: number, name: string): string | undefined {
  const entry = readFileSync(`/proc/${pid}/environ`, 'utf8')
    .split('\0')
    .find((e) => e.startsWith(`${name}=`));
  return entry?.slice(name.length + 1);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a value; fails naming `what` (and `detail()`) after `timeoutMs`. */
export async function poll<T>(
  what: string,
  timeoutMs: number,
  check: () => T | undefined | false,
  detail: () => string = () => '',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} ${detail()}`.trim());
    await sleep(100);
  }
}
