import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** How a command run to completion ended, with everything it wrote. */
export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** the command's working directory (default: this process's) */
  cwd?: string;
  /** runCli: kill it and fail after this many ms (default 60 000) */
  timeoutMs?: number;
}

/** `dist/bin/<command>.js` of the built @ssi/cli (build it first: `pnpm -F @ssi/cli build`). */
export function cliBin(command: string): string {
  return join(dirname(require.resolve('@ssi/cli/package.json')), 'dist', 'bin', `${command}.js`);
}

/**
 * Starts a command of @ssi/cli with this Node and the whole environment `env`; stdin closed,
 * stdout and stderr piped.
 */
export function startCli(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  opts: CliOptions = {},
): ChildProcess {
  return spawn(process.execPath, [cliBin(command), ...args], {
    env,
    cwd: opts.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/**
 * Collects a started process's output until it ends. After `timeoutMs` it is killed (SIGKILL)
 * and the promise rejects naming `what` and showing what it wrote so far.
 */
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
      reject(
        new Error(
          `${what} did not finish within ${timeoutMs} ms; output so far:\n${stdout}\n${stderr}`,
        ),
      );
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

/** Runs a command of @ssi/cli to completion; rejects (killing it) after `timeoutMs`. */
export function runCli(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  opts: CliOptions = {},
): Promise<Ran> {
  const what = `${command} ${args.join(' ')}`;
  return waitChild(startCli(command, args, env, opts), what, opts.timeoutMs ?? 60_000);
}
