import { delimiter, resolve } from 'node:path';
import { findProgram } from '../boot/find-program';
import { formatCpuList } from './cpu-list';

/**
 * The command that starts `argv` bound to `cpus`: `taskset -c <cpus> argv` (util-linux).
 * taskset sets its own affinity and then execs the program, so the process keeps its pid and
 * every thread it ever starts inherits the binding from the first instruction on (Open MPI's
 * daemons bind between fork and exec the same way; Node has no call for it).
 */
export function boundArgv(tasksetPath: string, cpus: readonly number[], argv: readonly string[]) {
  return [tasksetPath, '-c', formatCpuList(cpus), ...argv]; // taskset stops at its first operand
}

let cachedTaskset: string | null | undefined;

/** Where `taskset` is (on this process's PATH, or /usr/bin, /bin), or null: no binding here. */
export function findTaskset(): string | null {
  if (cachedTaskset === undefined) {
    const PATH = [process.env.PATH ?? '', '/usr/bin', '/bin'].join(delimiter);
    cachedTaskset = findProgram('taskset', { PATH }) ?? null;
  }
  return cachedTaskset;
}

/**
 * Whether execvp would find `file` (a name with a slash from `cwd`, else on `path`). A program
 * that cannot be started must fail as it would without taskset in front of it ("no such
 * program"), not as taskset's exit status 127.
 */
export function programRuns(file: string, path: string, cwd: string): boolean {
  return findProgram(file.includes('/') ? resolve(cwd, file) : file, { PATH: path }) !== undefined;
}
