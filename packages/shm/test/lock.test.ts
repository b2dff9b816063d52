import { afterEach, describe, expect, it } from 'vitest';
import { isShmError, PoolLock, SharedPool, ShmEndpoint, ShmSegment } from '../src/index';
import { killAll, shmListing, startFixture, testSession, waitExit, waitLine } from './helpers';

const segs: ShmSegment[] = [];
afterEach(async () => {
  await killAll();
  for (const s of segs.splice(0)) s.close();
});

function segment(lock: 'spin' | 'block', nprocs = 2) {
  const s = ShmSegment.create({
    sessionDir: testSession(),
    job: 'lk',
    nprocs,
    lock,
    poolSize: 256 * 1024,
    poolBlock: 4096,
    unlinkWhenAllAttached: false,
  });
  segs.push(s);
  return s;
}

const lockOf = (s: ShmSegment, opts = {}) =>
  new PoolLock(s, s.layout.lockOffset, s.layout.lockOffset + s.layout.cacheLine, s.lockKind, opts);

describe('pool', () => {
  it('allocates first-fit in blocks, frees, and reports no room with -1', async () => {
    const s = segment('spin');
    const pool = new SharedPool(s, s.layout, lockOf(s));
    expect(pool.size).toBe(256 * 1024);
    const a = await pool.alloc(1);
    const b = await pool.alloc(4097); // two blocks
    expect(a).toBe(s.layout.poolOffset);
    expect(b).toBe(s.layout.poolOffset + 4096);
    expect(pool.freeBlocks()).toBe(64 - 3);
    const rest = await pool.alloc(61 * 4096);
    expect(rest).toBeGreaterThan(0);
    expect(await pool.alloc(1)).toBe(-1);
    await pool.free([b]);
    expect(await pool.alloc(8192)).toBe(b); // the hole is reused
    await pool.free([a, b, rest]);
    expect(pool.freeBlocks()).toBe(64);
    await expect(pool.alloc(0)).rejects.toThrow(/from 1 to the pool size/);
    await expect(pool.alloc(256 * 1024 + 1)).rejects.toThrow(/from 1 to the pool size/);
    await expect(pool.free([a + 1])).rejects.toThrow(/not the start of an allocation/);
  });
});

describe('pool lock', () => {
  for (const kind of ['spin', 'block'] as const) {
    it(`${kind}: holds the owner's pid, excludes, and releases`, async () => {
      const s = segment(kind);
      const l = lockOf(s);
      expect(l.owner()).toBe(0);
      await l.acquire();
      expect(l.owner()).toBe(process.pid);
      expect(l.tryAcquire()).toBe(false);
      l.release();
      expect(l.owner()).toBe(0);
      expect(() => l.release()).toThrow(/holder is nobody/);
      // contended in-process: a second acquire waits for the release
      await l.acquire();
      let got = false;
      const p = l.acquire().then(() => {
        got = true;
      });
      await new Promise((r) => setTimeout(r, 30));
      expect(got).toBe(false);
      l.release();
      await p;
      expect(got).toBe(true);
      l.release();
    });

    it(`${kind}: a peer killed while holding it is detected (LOCK_OWNER_DEAD), the segment marked broken`, async () => {
      const s = segment(kind);
      const locker = startFixture('locker', { name: s.name, job: 'lk', index: 1 });
      const pid = Number(
        await waitLine(locker, 'LOCKED', 15_000, 'the peer to take the pool lock'),
      );
      const l = lockOf(s, { ownerCheckMs: 50 });
      expect(l.owner()).toBe(pid);
      // alive: we wait (and time out only by our own deadline)
      const early = await Promise.race([
        l.acquire().then(
          () => 'acquired',
          (e) => `error ${e.message}`,
        ),
        new Promise((r) => setTimeout(() => r('still waiting'), 200)),
      ]);
      expect(early).toBe('still waiting');
      locker.child.kill('SIGKILL');
      await waitExit(locker, 5000, 'the killed peer to go');
      // the endpoint sees it when it needs the pool
      const ep = new ShmEndpoint(s, { lock: { ownerCheckMs: 50 } });
      const t = Date.now();
      const err = await ep.send(1, new Uint8Array(100_000)).then(
        () => null,
        (e: unknown) => e,
      );
      expect(Date.now() - t).toBeLessThan(5000);
      expect(isShmError(err, 'LOCK_OWNER_DEAD')).toBe(true);
      expect((err as Error).message).toMatch(new RegExp(`pid ${pid}, which no longer exists`));
      expect(s.isBroken).toBe(true);
      ep.close();
      // every later use of the segment is refused with a clear error, nothing is touched
      const ep2 = new ShmEndpoint(s);
      expect(() => ep2.send(1, new Uint8Array(8))).toThrow(/marked broken/);
      ep2.close();
    }, 30_000);
  }

  it('a live holder that never releases: LOCK_TIMEOUT, not an eternal hang', async () => {
    const s = segment('block');
    const locker = startFixture('locker', { name: s.name, job: 'lk', index: 1 });
    await waitLine(locker, 'LOCKED', 15_000, 'the peer to take the pool lock');
    const l = lockOf(s, { ownerCheckMs: 20, timeoutMs: 300 });
    await expect(l.acquire()).rejects.toThrow(/held by live pid/);
  }, 30_000);
});

describe('futex wait/wake across processes', () => {
  it('a wait on the main thread does not block the event loop and is woken by another process', async () => {
    const sessionDir = testSession();
    const before = shmListing();
    const c = startFixture('creator', { sessionDir, job: 'fx', mode: 'waitword' });
    const name = await waitLine(c, 'CREATED', 15_000, 'the creator');
    const w = startFixture('waker', { name, job: 'fx', delayMs: 300 });
    const woke = await waitLine(c, 'WOKE', 15_000, 'the waiter to be woken');
    const [result, value, ticks] = woke.split(' ');
    expect(result).toBe('ok');
    expect(value).toBe('42');
    // about 300 ms of waiting at a 5 ms interval: the loop kept running
    expect(Number(ticks!.slice('ticks='.length))).toBeGreaterThan(10);
    expect(await waitLine(w, 'WOKEN', 5000, 'the waker')).toBe('1');
    await waitExit(c, 5000, 'the creator to exit');
    await waitExit(w, 5000, 'the waker to exit');
    expect(shmListing()).toEqual(before);
  }, 30_000);

  it('times out, and reports not-equal', async () => {
    const s = segment('block');
    const { waitWord, waitWordSync } = await import('../src/index');
    const off = s.layout.procOffset + 32;
    expect(await waitWord(s, off, 0, { timeoutMs: 30 })).toBe('timed-out');
    expect(await waitWord(s, off, 5, { timeoutMs: 30 })).toBe('not-equal');
    expect(waitWordSync(s, off, 0, 10, 1000)).toBe('timed-out');
    expect(
      await waitWord(s, off, 0, { timeoutMs: 30, syncSpinNs: 10_000, helperSpinNs: 10_000 }),
    ).toBe('timed-out');
    expect(() => waitWordSync(s, 2, 0, 1)).toThrow(/multiple of 4/);
    expect(() => waitWordSync(s, s.layout.totalSize, 0, 1)).toThrow(/outside/);
  });
});
