import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { segmentName, sessionPrefix } from '@ssi/shm';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cleanUniverse,
  haltUniverse,
  JOB_RESOURCE_DIR,
  jobResourcePrefix,
  type LamClient,
  removeJobResources,
} from '../src/index';
import { bootLocal, cleanupUniverses, isAlive, sleep, waitFor, within } from './helpers';

/** Files this test put into /dev/shm: removed after each test, whatever happened. */
const made: string[] = [];

afterEach(async () => {
  await cleanupUniverses();
  for (const f of made.splice(0)) rmSync(f, { force: true });
});

const A = ['127.0.0.2'];
/** Job ids unique to this run, so that no other job on the machine has these names. */
const job = (name: string) => `${name}-${process.pid}-${Date.now().toString(36)}`;

function segmentPath(sessionDir: string, jobId: string, tag = 'sm'): string {
  const path = join(JOB_RESOURCE_DIR, `${jobResourcePrefix({ sessionDir, job: jobId })}${tag}`);
  made.push(path);
  return path;
}

/**
 * Starts `sleep 60` for `jobId` through the lamd; it first creates `segment` (as an sm rpi would
 * with shm_open), and only if the lamd gave it the expected session directory.
 */
async function startRank(c: LamClient, sessionDir: string, jobId: string, segment?: string) {
  const script = segment
    ? 'test "$LAM_MPI_SESSION_DIR" = "$1" && : > "$2" && exec sleep 60'
    : 'exec sleep 60';
  const proc = await c.spawn(0, {
    argv: ['sh', '-c', script, 'rank', sessionDir, segment ?? ''],
    job: jobId,
  });
  if (segment) await waitFor(`pid ${proc.pid} to create ${segment}`, () => existsSync(segment));
  return proc;
}

describe('the naming rule of job resources', () => {
  it('is the rule @ssi/shm names its segments by (one owner: @ssi/lam)', () => {
    const cases = [
      { sessionDir: '/tmp/ssi-alice@node1', job: '0-1234-abcd', user: 'alice' },
      { sessionDir: '/tmp/ssi-bob@h-x', job: 'a.b/c d', user: 'bob.smith-x' },
      { sessionDir: '/var/tmp/s', job: 'j'.repeat(80), user: 'u'.repeat(40) },
      { sessionDir: '/tmp/s', user: 'carol' },
    ];
    for (const c of cases) {
      expect(jobResourcePrefix(c)).toBe(sessionPrefix(c));
      if (c.job) expect(segmentName({ ...c, tag: 'sm' })).toBe(`/${jobResourcePrefix(c)}sm`);
    }
    expect(jobResourcePrefix({ sessionDir: '/tmp/s' })).toBe(
      sessionPrefix({ sessionDir: '/tmp/s' }),
    );
  });

  it('no job prefix matches another job, user or session', () => {
    const base = { sessionDir: '/tmp/ssi-u@h', user: 'u' };
    const one = jobResourcePrefix({ ...base, job: 'a' });
    expect(`${jobResourcePrefix({ ...base, job: 'a-b' })}sm`.startsWith(one)).toBe(false);
    expect(`${jobResourcePrefix({ ...base, job: 'ab' })}sm`.startsWith(one)).toBe(false);
    const other = { sessionDir: '/tmp/ssi-u@h-2', user: 'u' };
    expect(
      `${jobResourcePrefix({ ...other, job: 'a' })}sm`.startsWith(jobResourcePrefix(base)),
    ).toBe(false);
    expect(
      `${jobResourcePrefix({ ...base, user: 'u_x', job: 'a' })}sm`.startsWith(
        jobResourcePrefix(base),
      ),
    ).toBe(false);
  });

  it('refuses bad input with what was expected', () => {
    expect(() => jobResourcePrefix({ sessionDir: '' })).toThrow(
      /sessionDir must be a non-empty path/,
    );
    expect(() => jobResourcePrefix({ sessionDir: '/tmp/s', job: '' })).toThrow(
      /job must be a non-empty string/,
    );
  });

  it('removeJobResources keeps the jobs it is told to keep', () => {
    const sessionDir = `/tmp/ssi-unit-${process.pid}`;
    const gone = segmentPath(sessionDir, 'x');
    const kept = segmentPath(sessionDir, 'y');
    writeFileSync(gone, '');
    writeFileSync(kept, '');
    const r = removeJobResources({ sessionDir, keepJobs: ['y'] });
    expect(r.removed).toEqual([gone.slice(JOB_RESOURCE_DIR.length + 1)]);
    expect(existsSync(kept)).toBe(true);
  });
});

describe('the lamd removes the resources of its jobs', () => {
  it("after a job's last process on the node is killed; others' stay", async () => {
    const u = await bootLocal(A);
    const c = await u.client(0);
    const sessionDir = u.sessionDir(0);
    const [x, y] = [job('x'), job('y')];
    const xSeg = segmentPath(sessionDir, x);
    const ySeg = segmentPath(sessionDir, y);
    // Same user and job id, another universe (another session directory): not this lamd's.
    const foreign = segmentPath(`${sessionDir}-elsewhere`, x);
    writeFileSync(foreign, '');

    const x1 = await startRank(c, sessionDir, x, xSeg);
    const x2 = await startRank(c, sessionDir, x);
    const y1 = await startRank(c, sessionDir, y, ySeg);

    process.kill(x1.pid, 'SIGKILL');
    await within(x1.exited, 10_000, 'the first rank of job x to exit');
    await sleep(300); // the lamd would have swept by now: job x still has a process
    expect(existsSync(xSeg)).toBe(true);

    process.kill(x2.pid, 'SIGKILL');
    await within(x2.exited, 10_000, 'the last rank of job x to exit');
    await waitFor(`the lamd to remove ${xSeg}`, () => !existsSync(xSeg), 5000);
    expect(existsSync(ySeg)).toBe(true); // job y still runs
    expect(existsSync(foreign)).toBe(true); // another universe's
    expect(isAlive(y1.pid)).toBe(true);
  });

  it("at lamclean and at halt, the whole session's, never another universe's", async () => {
    const u = await bootLocal(A);
    const c = await u.client(0);
    const sessionDir = u.sessionDir(0);
    const [y, stale] = [job('y'), job('stale')];
    const ySeg = segmentPath(sessionDir, y);
    const staleSeg = segmentPath(sessionDir, stale); // a job with no process here
    const foreign = segmentPath(`${sessionDir}-elsewhere`, y);
    writeFileSync(staleSeg, '');
    writeFileSync(foreign, '');
    await startRank(c, sessionDir, y, ySeg);

    await within(cleanUniverse(c), 20_000, 'lamclean');
    expect(existsSync(ySeg)).toBe(false);
    expect(existsSync(staleSeg)).toBe(false);
    expect(existsSync(foreign)).toBe(true);

    const later = segmentPath(sessionDir, job('later'));
    writeFileSync(later, '');
    await within(haltUniverse(c, 10_000), 20_000, 'lamhalt');
    await waitFor(`the halted lamd to remove ${later}`, () => !existsSync(later), 5000);
    expect(existsSync(foreign)).toBe(true);
  });
});
