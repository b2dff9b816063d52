import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { TestbedError } from './errors';
import type { SshResult } from './types';

export interface RunOptions {
  timeoutMs: number;
  input?: string | Buffer;
  /** names the operation in error messages: "ssh to h1 (127.0.0.2)" */
  what: string;
}

/** Runs a program to completion, collecting its output; rejects on spawn failure or timeout. */
export function run(file: string, args: string[], opts: RunOptions): Promise<SshResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on('data', (b: Buffer) => out.push(b));
    child.stderr!.on('data', (b: Buffer) => err.push(b));
    if (opts.input !== undefined) {
      child.stdin!.on('error', () => {}); // the remote side may not read it all
      child.stdin!.end(opts.input);
    }
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(
        new TestbedError(
          'SSH_FAILED',
          `${opts.what}: could not run ${file}: ${e.message}. Check that openssh-client is installed.`,
        ),
      );
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stderr = Buffer.concat(err).toString('utf8');
      if (timedOut) {
        reject(
          new TestbedError(
            'SSH_FAILED',
            `${opts.what} did not finish within ${opts.timeoutMs} ms (killed). ` +
              `stderr so far: ${stderr.trim() || '(empty)'}. Pass a larger timeoutMs if the command is slow.`,
          ),
        );
        return;
      }
      resolve({
        code: code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0),
        stdout: Buffer.concat(out).toString('utf8'),
        stderr,
      });
    });
  });
}
