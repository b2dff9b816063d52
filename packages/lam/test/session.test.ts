import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findSessionDir, sessionDirFor, sessionSuffix, sessionUser } from '../src/index';
import { createSessionDir } from '../src/session/session-dir';
import { writeSessionInfo } from '../src/session/session-info';

// Session directories live in TMPDIR: this file points it at a private directory.
const saved = process.env.TMPDIR;
const tmp = mkdtempSync(join(tmpdir(), 'ssi-session-test-'));
beforeAll(() => {
  process.env.TMPDIR = tmp;
});
afterAll(() => {
  if (saved === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = saved;
  rmSync(tmp, { recursive: true, force: true });
});

function fakeSession(host: string, suffix?: string) {
  const dir = sessionDirFor(host, suffix);
  createSessionDir(dir);
  writeSessionInfo(dir, { nodeName: host, suffix, lamdPid: 1 });
  return dir;
}

describe('session directories', () => {
  it('are named <TMPDIR>/ssi-<user>@<host>[-<suffix>] and created 0700', () => {
    const dir = sessionDirFor('127.0.0.3', 'x1');
    expect(dir).toBe(join(tmp, `ssi-${sessionUser()}@127.0.0.3-x1`));
    createSessionDir(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'procs')).mode & 0o777).toBe(0o700);
    rmSync(dir, { recursive: true });
  });

  it('refuse names that are not file-name safe, and a planted symlink', () => {
    expect(() => sessionDirFor('../etc')).toThrow(/cannot be part of a session directory name/);
    expect(() => sessionSuffix({ LAM_MPI_SESSION_SUFFIX: 'a/b' })).toThrow(
      /LAM_MPI_SESSION_SUFFIX/,
    );
    const target = join(tmp, 'elsewhere');
    mkdirSync(target);
    symlinkSync(target, sessionDirFor('planted'));
    expect(() => createSessionDir(sessionDirFor('planted'))).toThrow();
  });

  it('are found by LAM_MPI_SESSION_DIR, then LAM_MPI_SESSION_HOST, then the host name', () => {
    const a = fakeSession('127.0.0.2', 'f');
    const b = fakeSession('127.0.0.3', 'f');
    expect(findSessionDir({ LAM_MPI_SESSION_DIR: '/x/y' })).toBe('/x/y');
    expect(findSessionDir({ LAM_MPI_SESSION_HOST: '127.0.0.3', LAM_MPI_SESSION_SUFFIX: 'f' })).toBe(
      b,
    );
    expect(() => findSessionDir({ LAM_MPI_SESSION_SUFFIX: 'f' })).toThrow(
      new RegExp(`several universes run on this machine.*${a}.*${b}.*LAM_MPI_SESSION_HOST`, 's'),
    );
    const mine = fakeSession(hostname(), 'f');
    expect(findSessionDir({ LAM_MPI_SESSION_SUFFIX: 'f' })).toBe(mine);
  });

  it('fall back to the only session of this user and suffix, else explain', () => {
    const only = fakeSession('node7.cluster', 'g');
    expect(findSessionDir({ LAM_MPI_SESSION_SUFFIX: 'g' })).toBe(only);
    expect(() => findSessionDir({ LAM_MPI_SESSION_SUFFIX: 'none' })).toThrow(
      /no LAM universe is running here with session suffix "none".*run lamboot first/,
    );
  });
});
