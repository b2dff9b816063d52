import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanStaleSegments, isShmError, ShmSegment, sessionPrefix } from '../src/index';
import { killAll, shmListing, startFixture, testSession, waitExit, waitLine } from './helpers';

afterEach(killAll);

describe('clean-up', () => {
  it('SIGKILL leaves a segment behind; cleanStaleSegments removes it and /dev/shm is as before', async () => {
    const before = shmListing();
    const sessionDir = testSession();
    const c = startFixture('creator', { sessionDir, job: '7', mode: 'hang' });
    const name = await waitLine(c, 'CREATED', 15_000, 'the creator to create its segment');
    expect(shmListing()).toContain(name.slice(1));
    // alive: kept, with the reason
    const live = cleanStaleSegments({ sessionDir });
    expect(live.removed).toEqual([]);
    expect(live.kept).toEqual([
      { name: name.slice(1), reason: expect.stringMatching(/in use by pid/) },
    ]);
    c.child.kill('SIGKILL');
    const { signal } = await waitExit(c, 5000, 'the creator to die');
    expect(signal).toBe('SIGKILL');
    expect(shmListing()).toContain(name.slice(1)); // SIGKILL runs no handler
    // other sessions are not touched
    expect(cleanStaleSegments({ sessionDir: testSession() }).removed).toEqual([]);
    const dry = cleanStaleSegments({ sessionDir, dryRun: true });
    expect(dry.removed).toEqual([name.slice(1)]);
    expect(shmListing()).toContain(name.slice(1));
    const res = cleanStaleSegments({ sessionDir });
    expect(res).toEqual({ removed: [name.slice(1)], kept: [] });
    expect(shmListing()).toEqual(before);
  }, 30_000);

  it('process.exit without close() and SIGTERM both unlink what the process created', async () => {
    const before = shmListing();
    const e = startFixture('creator', { sessionDir: testSession(), job: '8', mode: 'exit' });
    await waitLine(e, 'CREATED', 15_000, 'the creator');
    expect((await waitExit(e, 5000, 'the creator to exit')).code).toBe(0);
    expect(shmListing()).toEqual(before);

    const t = startFixture('creator', { sessionDir: testSession(), job: '9', mode: 'hang' });
    const name = await waitLine(t, 'CREATED', 15_000, 'the creator');
    expect(shmListing()).toContain(name.slice(1));
    t.child.kill('SIGTERM');
    // it still dies of SIGTERM (the default action is restored and the signal re-raised)
    expect((await waitExit(t, 5000, 'the creator to die of SIGTERM')).signal).toBe('SIGTERM');
    expect(shmListing()).toEqual(before);
  }, 30_000);

  it('a normal job (create, attach, close) leaves /dev/shm as it was', async () => {
    const before = shmListing();
    const sessionDir = testSession();
    const a = ShmSegment.create({ sessionDir, job: 'n', nprocs: 2, unlinkWhenAllAttached: false });
    const b = await ShmSegment.attach({
      sessionDir,
      job: 'n',
      index: 1,
      unlinkWhenAllAttached: false,
    });
    expect(shmListing().length).toBe(before.length + 1);
    b.close();
    a.close();
    expect(shmListing()).toEqual(before);
  });

  it('force removes segments in use; job narrows to one job', () => {
    const before = shmListing();
    const sessionDir = testSession();
    const a = ShmSegment.create({ sessionDir, job: 'one', nprocs: 2 });
    const b = ShmSegment.create({ sessionDir, job: 'two', nprocs: 2 });
    expect(cleanStaleSegments({ sessionDir }).kept.length).toBe(2);
    const r = cleanStaleSegments({ sessionDir, job: 'one', force: true });
    expect(r.removed).toEqual([a.name.slice(1)]);
    expect(shmListing()).toContain(b.name.slice(1));
    expect(a.name.startsWith(`/${sessionPrefix({ sessionDir, job: 'one' })}`)).toBe(true);
    a.close(); // unlink of a name already gone is fine
    b.close();
    expect(shmListing()).toEqual(before);
  });

  it('a broken segment is refused on attach', async () => {
    const sessionDir = testSession();
    const a = ShmSegment.create({ sessionDir, job: 'br', nprocs: 2 });
    a.markBroken(12345);
    const err = await ShmSegment.attach({ sessionDir, job: 'br', index: 1 }).catch(
      (e: unknown) => e,
    );
    expect(isShmError(err, 'BROKEN')).toBe(true);
    expect((err as Error).message).toMatch(/pid 12345 died holding its pool lock/);
    a.close();
  });

  it('the ssi-shm-clean bin cleans a session after a crash', async () => {
    const before = shmListing();
    const sessionDir = testSession();
    const c = startFixture('creator', { sessionDir, job: '10', mode: 'hang' });
    const name = await waitLine(c, 'CREATED', 15_000, 'the creator');
    c.child.kill('SIGKILL');
    await waitExit(c, 5000, 'the creator to die');
    const bin = join(__dirname, '..', 'src', 'clean-cli.ts');
    const out = execFileSync(
      process.execPath,
      ['--import', 'tsx', bin, '--session-dir', sessionDir, '--json'],
      {
        encoding: 'utf8',
      },
    );
    expect(JSON.parse(out)).toEqual({ removed: [name.slice(1)], kept: [] });
    expect(shmListing()).toEqual(before);
    const help = execFileSync(process.execPath, ['--import', 'tsx', bin, '--help'], {
      encoding: 'utf8',
    });
    expect(help).toMatch(/usage: ssi-shm-clean/);
  }, 30_000);
});
