import { createHash } from 'node:crypto';
import { userInfo } from 'node:os';
import { ShmError } from './errors';

/*
 * Segment names: /ssi-<user>-<hash>-<job>-<tag>
 *   user  the login name, reduced to [A-Za-z0-9_] (at most 32 characters)
 *   hash  the first 12 hex digits of sha256(absolute session directory): one universe, one hash
 *   job   the job id, reduced to [A-Za-z0-9_.] (at most 48 characters)
 *   tag   what the segment is for within the job ([a-z0-9], default "sm")
 * The name carries no secret; the segment is created with mode 0600, so only the user can open it.
 */

export const NAME_PREFIX = 'ssi-';

export interface NameParts {
  /** The universe's session directory (see DESIGN: ${TMPDIR:-/tmp}/ssi-<user>@<host>[-<suffix>]). */
  sessionDir: string;
  /** The job id. */
  job: string;
  /** What the segment is for; default "sm". */
  tag?: string;
  /** The user; default the current login name. */
  user?: string;
}

export function currentUser(): string {
  try {
    return userInfo().username;
  } catch {
    return String(process.getuid?.() ?? 'user');
  }
}

function clean(s: string, allowed: RegExp, max: number): string {
  return s.replace(allowed, '_').slice(0, max);
}

export function sessionHash(sessionDir: string): string {
  if (typeof sessionDir !== 'string' || sessionDir.length === 0) {
    throw new ShmError('BAD_ARGS', 'sessionDir must be a non-empty path (the session directory)');
  }
  return createHash('sha256').update(sessionDir).digest('hex').slice(0, 12);
}

/** The prefix shared by every segment of a session (and, given `job`, of one job). */
export function sessionPrefix(opts: { sessionDir: string; job?: string; user?: string }): string {
  const user = clean(opts.user ?? currentUser(), /[^A-Za-z0-9_]/g, 32);
  let p = `${NAME_PREFIX}${user}-${sessionHash(opts.sessionDir)}-`;
  if (opts.job !== undefined) p += `${jobPart(opts.job)}-`;
  return p;
}

function jobPart(job: string): string {
  if (typeof job !== 'string' || job.length === 0) {
    throw new ShmError('BAD_ARGS', 'job must be a non-empty string (the job id)');
  }
  return clean(job, /[^A-Za-z0-9_.]/g, 48);
}

/** The shm_open name ("/ssi-...") of a job's segment. */
export function segmentName(parts: NameParts): string {
  const tag = parts.tag ?? 'sm';
  if (!/^[a-z0-9]{1,16}$/.test(tag)) {
    throw new ShmError('BAD_ARGS', `tag must be 1-16 characters [a-z0-9], got "${tag}"`);
  }
  return `/${sessionPrefix(parts)}${tag}`;
}

export function checkName(name: string): string {
  if (typeof name !== 'string' || !/^\/[^/\0]{1,250}$/.test(name)) {
    throw new ShmError(
      'BAD_ARGS',
      `a segment name is "/" followed by 1-250 characters without "/", got ${JSON.stringify(name)}`,
    );
  }
  return name;
}
