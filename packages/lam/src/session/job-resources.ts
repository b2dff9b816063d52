import { createHash } from 'node:crypto';
import { readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { LamError } from '../errors';
import { sessionUser } from './session-dir';

/*
 * The naming rule of a job's node-local resources (POSIX shared-memory segments today), owned
 * here so that the lamd can remove them without loading the code that made them:
 *
 *   <dir>/ssi-<user>-<hash12>-<job>-<tag>
 *     user   the login name, every character outside [A-Za-z0-9_] replaced by "_", at most 32
 *     hash12 the first 12 hex digits of sha256(the session directory, exactly as the lamd gives
 *            it to its processes in LAM_MPI_SESSION_DIR): one universe, one hash
 *     job    the job id, every character outside [A-Za-z0-9_.] replaced by "_", at most 48
 *     tag    whatever the creator likes (no "/")
 *
 * No part but the tag can contain "-", so a prefix never matches another user's, universe's or
 * job's names. @ssi/shm implements the same rule (its `sessionPrefix`) without depending on
 * this package; a test of @ssi/lam ties the two together.
 */

/** Where the lamd looks for a job's resources: POSIX shared memory on Linux. */
export const JOB_RESOURCE_DIR = '/dev/shm';

export interface JobResourceName {
  /** The universe's session directory (`LAM_MPI_SESSION_DIR` of the job's processes). */
  sessionDir: string;
  /** The job id; omitted: every job of the session. */
  job?: string;
  /** Whose resources; default the current user. */
  user?: string;
}

/** `ssi-<user>-<hash12>-` (the session's), or `ssi-<user>-<hash12>-<job>-` (one job's). */
export function jobResourcePrefix(name: JobResourceName): string {
  if (typeof name.sessionDir !== 'string' || name.sessionDir.length === 0) {
    throw new LamError('BAD_ARGS', 'jobResourcePrefix: sessionDir must be a non-empty path');
  }
  if (name.job !== undefined && (typeof name.job !== 'string' || name.job.length === 0)) {
    throw new LamError('BAD_ARGS', 'jobResourcePrefix: job must be a non-empty string (a job id)');
  }
  const user = (name.user ?? sessionUser()).replace(/[^A-Za-z0-9_]/g, '_').slice(0, 32);
  const hash = createHash('sha256').update(name.sessionDir).digest('hex').slice(0, 12);
  const job =
    name.job === undefined ? '' : `${name.job.replace(/[^A-Za-z0-9_.]/g, '_').slice(0, 48)}-`;
  return `ssi-${user}-${hash}-${job}`;
}

export interface RemoveOptions extends JobResourceName {
  /** Jobs whose resources must stay (they still have live processes). */
  keepJobs?: Iterable<string>;
  /** Default `JOB_RESOURCE_DIR`; tests point it elsewhere. */
  dir?: string;
}

export interface RemoveResult {
  /** File names removed. */
  removed: string[];
  /** File names that could not be removed, with why. */
  failed: { name: string; reason: string }[];
}

/**
 * Removes every entry of `dir` named with the prefix of the session (or of one job), except
 * those of `keepJobs`. Synchronous, so that it can run in exit paths; never throws for one entry.
 */
export function removeJobResources(opts: RemoveOptions): RemoveResult {
  const dir = opts.dir ?? JOB_RESOURCE_DIR;
  const prefix = jobResourcePrefix(opts);
  const keep = [...(opts.keepJobs ?? [])].map((job) => jobResourcePrefix({ ...opts, job }));
  const result: RemoveResult = { removed: [], failed: [] };
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return result; // no such directory: nothing of ours can be there
  }
  for (const name of entries) {
    if (!name.startsWith(prefix) || keep.some((k) => name.startsWith(k))) continue;
    try {
      unlinkSync(join(dir, name));
      result.removed.push(name);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') result.failed.push({ name, reason: code ?? String(err) });
    }
  }
  return result;
}
