import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { hostname, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { LamError } from '../errors';
import { readSessionInfo } from './session-info';

type Env = Record<string, string | undefined>;

/** What lives in a session directory. */
export const SESSION_FILES = {
  socket: 'lamd.sock',
  universe: 'universe.json',
  secret: 'secret',
  pid: 'lamd.pid',
  log: 'lamd.log',
  info: 'session.json',
  procs: 'procs',
} as const;

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function sessionUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? `uid${process.getuid?.() ?? 'unknown'}`;
  }
}

/** `LAM_MPI_SESSION_SUFFIX`, checked: it becomes part of a file name. */
export function sessionSuffix(env: Env = process.env): string | undefined {
  const s = env.LAM_MPI_SESSION_SUFFIX;
  if (s === undefined || s === '') return undefined;
  checkName(s, 'LAM_MPI_SESSION_SUFFIX');
  return s;
}

/** The name this host goes by for session directories: `LAM_MPI_SESSION_HOST`, else hostname. */
export function sessionHost(env: Env = process.env): string {
  const h = env.LAM_MPI_SESSION_HOST;
  if (h !== undefined && h !== '') {
    checkName(h, 'LAM_MPI_SESSION_HOST');
    return h;
  }
  return hostname();
}

export function checkName(value: string, what: string): void {
  if (!NAME_RE.test(value) || value.includes('..')) {
    throw new LamError(
      'BAD_ARGS',
      `${what} "${value}" cannot be part of a session directory name; use letters, digits, ".", "_" and "-"`,
    );
  }
}

/** `${TMPDIR:-/tmp}/ssi-<user>@<host>[-<suffix>]`. */
export function sessionDirFor(host: string, suffix?: string, user = sessionUser()): string {
  checkName(host, 'host name');
  if (suffix !== undefined) checkName(suffix, 'session suffix');
  return join(tmpdir(), `ssi-${user}@${host}${suffix ? `-${suffix}` : ''}`);
}

/**
 * Creates the directory with mode 0700 and makes sure it is ours and really a directory (not a
 * symlink someone planted in /tmp): the secret and the lamd socket live here.
 */
export function createSessionDir(dir: string): void {
  mkdirSync(dir, { mode: 0o700 });
  chmodSync(dir, 0o700);
  checkSessionDirSafe(dir);
  mkdirSync(join(dir, SESSION_FILES.procs), { mode: 0o700 });
}

export function checkSessionDirSafe(dir: string): void {
  const st = lstatSync(dir);
  const uid = process.getuid?.();
  if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0) {
    throw new LamError(
      'BAD_CONFIG',
      `session directory ${dir} is not a private (0700) directory owned by this user; remove it and try again`,
    );
  }
}

export function removeSessionDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Which session directory a client uses, in this order:
 *  1. `LAM_MPI_SESSION_DIR` (set by the lamd for every process it starts);
 *  2. `LAM_MPI_SESSION_HOST` (+ `LAM_MPI_SESSION_SUFFIX`): the node name this host has in the
 *     universe (needed on the testbed, where all "hosts" are one machine);
 *  3. the host name, when that directory exists;
 *  4. the only session directory of this user and suffix in the temp directory.
 */
export function findSessionDir(env: Env = process.env): string {
  if (env.LAM_MPI_SESSION_DIR) return env.LAM_MPI_SESSION_DIR;
  const suffix = sessionSuffix(env);
  if (env.LAM_MPI_SESSION_HOST) return sessionDirFor(sessionHost(env), suffix);
  const byHostname = sessionDirFor(hostname(), suffix);
  if (existsSync(byHostname)) return byHostname;
  const candidates = listSessionDirs(suffix);
  if (candidates.length === 1) return candidates[0]!;
  const what = suffix ? ` with session suffix "${suffix}"` : '';
  if (candidates.length === 0) {
    throw new LamError(
      'NO_UNIVERSE',
      `no LAM universe is running here${what} (no session directory ${byHostname}); run lamboot first`,
    );
  }
  throw new LamError(
    'NO_UNIVERSE',
    `several universes run on this machine${what}: ${candidates.join(', ')}; ` +
      'set LAM_MPI_SESSION_HOST to the name this host has in the universe (or LAM_MPI_SESSION_DIR)',
  );
}

/** Session directories of this user whose lamd recorded the given suffix. */
export function listSessionDirs(suffix?: string, user = sessionUser()): string[] {
  let names: string[];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return [];
  }
  return names
    .filter((n) => n.startsWith(`ssi-${user}@`))
    .map((n) => join(tmpdir(), n))
    .filter((dir) => {
      const info = readSessionInfo(dir);
      return info !== undefined && (info.suffix ?? undefined) === suffix;
    })
    .sort();
}
