import { lstatSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isProcessAlive, sessionUser } from '@ssi/lam';

/**
 * Where mpirun listens for checkpoint requests: `${TMPDIR}/ssi-<user>/cr/mpirun-<pid>.sock`, with
 * an alias `job-<job id>` holding the pid, so `lamcheckpoint` finds a job by pid or by job id.
 * The directories are the user's own (mode 0700): nobody else can ask for a checkpoint.
 */
export function checkpointDir(): string {
  return join(tmpdir(), `ssi-${sessionUser()}`, 'cr');
}

export function checkpointSocketPath(pid: number): string {
  return join(checkpointDir(), `mpirun-${pid}.sock`);
}

const JOB_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** A job id that can be part of a file name (mpirun's are `<node>-<pid>-<hex>`). */
export function isJobId(value: string): boolean {
  return JOB_ID_RE.test(value) && !value.includes('..');
}

export function jobAliasPath(jobId: string): string {
  if (!isJobId(jobId)) {
    throw new Error(
      `job id "${jobId}" cannot name a file; expected letters, digits, ".", "_", "-"`,
    );
  }
  return join(checkpointDir(), `job-${jobId}`);
}

/** Creates `ssi-<user>/cr` (mode 0700) and makes sure both are real directories of this user. */
export function ensureCheckpointDir(): string {
  const cr = checkpointDir();
  mkdirSync(cr, { recursive: true, mode: 0o700 });
  for (const dir of [join(cr, '..'), cr]) {
    const st = lstatSync(dir);
    const uid = process.getuid?.();
    if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0) {
      throw new Error(
        `${dir} must be a directory of this user with mode 0700 (it is not): remove it and retry`,
      );
    }
  }
  return cr;
}

/**
 * Removes `ssi-<user>/cr` and `ssi-<user>` when nothing is left in them (the last mpirun listening
 * here has ended); a directory another mpirun still uses is not empty and stays.
 */
export function removeCheckpointDirIfEmpty(): void {
  const cr = checkpointDir();
  for (const dir of [cr, join(cr, '..')]) {
    try {
      rmdirSync(dir);
    } catch {
      return; // not empty (another job, another tool of this user) or already gone
    }
  }
}

/** The pid a `job-<id>` alias names, or undefined when there is no such (valid) alias. */
export function readJobAlias(jobId: string): number | undefined {
  try {
    const pid = Number(readFileSync(jobAliasPath(jobId), 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Removes what mpiruns that died without closing their listener (SIGKILL, a crash) left here:
 * `mpirun-<pid>.sock` and `job-<id>` aliases naming a pid that no longer runs. Run when a listener
 * starts, so the directory does not fill up over a user's jobs; a live mpirun's files are kept.
 */
export function sweepDeadListeners(): void {
  const dir = checkpointDir();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = pidNamedBy(dir, name);
    if (pid !== undefined && !isProcessAlive(pid)) rmSync(join(dir, name), { force: true });
  }
}

/** The mpirun pid a socket or alias file names, or undefined for any other file. */
function pidNamedBy(dir: string, name: string): number | undefined {
  const socket = /^mpirun-(\d+)\.sock$/.exec(name);
  if (socket) return Number(socket[1]);
  if (!name.startsWith('job-') || name.endsWith('.tmp')) return undefined;
  try {
    const pid = Number(readFileSync(join(dir, name), 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
