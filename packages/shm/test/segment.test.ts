import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import {
  computeLayout,
  isShmError,
  LAYOUT_VERSION,
  type ShmFailure,
  ShmSegment,
  segmentName,
  sessionHash,
} from '../src/index';
import { shmListing, testSession } from './helpers';

const open: ShmSegment[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

function create(opts: Partial<Parameters<typeof ShmSegment.create>[0]> = {}) {
  const s = ShmSegment.create({
    sessionDir: testSession(),
    job: 'job1',
    nprocs: 3,
    poolSize: 64 * 1024,
    ...opts,
  });
  open.push(s);
  return s;
}

async function failure(p: Promise<unknown> | (() => unknown)): Promise<ShmFailure> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    if (isShmError(e)) return e.failure;
    throw e;
  }
  throw new Error('expected a ShmError, nothing was thrown');
}

describe('layout and sizes', () => {
  it("is LAM's (2C) + N(N-1)(S+C) + P plus header, process lines and block table", () => {
    const l = computeLayout({ nprocs: 4, shortLimit: 8192, poolSize: 1 << 20, poolBlock: 16384 });
    expect(l.ringCapacity).toBe(8192 + 8);
    expect(l.postboxStride).toBe(64 + 8256);
    expect(l.postboxOffset - l.procOffset).toBe(4 * 64);
    expect(l.tableOffset - l.postboxOffset).toBe(12 * l.postboxStride);
    expect(l.poolOffset % 4096).toBe(0);
    expect(l.totalSize).toBe(l.poolOffset + (1 << 20));
  });

  it('rejects sizes out of range with BAD_ARGS naming the parameter', async () => {
    const bad: [object, RegExp][] = [
      [{ nprocs: 0 }, /nprocs/],
      [{ nprocs: 1.5 }, /nprocs/],
      [{ nprocs: 5000 }, /nprocs/],
      [{ shortLimit: 10 }, /shortLimit/],
      [{ shortLimit: 2 ** 30 }, /shortLimit/],
      [{ poolBlock: 5000 }, /power of two/],
      [{ poolBlock: 1024 }, /poolBlock/],
      [{ poolSize: 100 }, /smaller than one pool block/],
      [{ poolSize: -1 }, /poolSize/],
      [{ poolSize: 2 ** 40 }, /poolSize/],
      [{ job: '' }, /job/],
      [{ job: 'x'.repeat(65) }, /job id/],
      [{ index: 3 }, /index/],
      [{ lock: 'mutex' }, /lock/],
    ];
    for (const [opts, msg] of bad) {
      const before = shmListing();
      expect(() => create(opts as never)).toThrow(msg);
      expect(await failure(() => create(opts as never))).toBe('BAD_ARGS');
      expect(shmListing()).toEqual(before); // nothing created
    }
  });
});

describe('names', () => {
  it('derive from user, session hash, job and tag', () => {
    const n = segmentName({ sessionDir: '/tmp/ssi-me@host', job: '42', user: 'me' });
    expect(n).toBe(`/ssi-me-${sessionHash('/tmp/ssi-me@host')}-42-sm`);
    expect(segmentName({ sessionDir: '/a', job: 'a/b c', tag: 'x1', user: 'u' })).toMatch(
      /-a_b_c-x1$/,
    );
    expect(() => segmentName({ sessionDir: '/a', job: 'j', tag: 'BAD!' })).toThrow(/tag/);
  });
});

describe('create and attach', () => {
  it('peers attach by name and see the same memory; the name goes once all attached', async () => {
    const sessionDir = testSession();
    const before = shmListing();
    const a = create({ sessionDir });
    expect(shmListing().length).toBe(before.length + 1);
    const b = await ShmSegment.attach({ sessionDir, job: 'job1', index: 1 });
    open.push(b);
    expect(b.layout).toEqual(a.layout);
    expect(b.lockKind).toBe('block');
    a.i32[a.layout.poolOffset >> 2] = 1234;
    expect(b.i32[b.layout.poolOffset >> 2]).toBe(1234);
    expect(a.attachedCount).toBe(2);
    expect(shmListing().length).toBe(before.length + 1);
    const c = await ShmSegment.attach({ sessionDir, job: 'job1', index: 2 });
    open.push(c);
    expect(c.attachedCount).toBe(3);
    expect(shmListing()).toEqual(before); // unlinked: a crash now leaves nothing behind
  });

  it('close() unmaps: every view becomes empty, and the creator unlinks', () => {
    const before = shmListing();
    const a = ShmSegment.create({ sessionDir: testSession(), job: 'j', nprocs: 2, poolSize: 0 });
    const view = a.i32;
    expect(view.length).toBeGreaterThan(0);
    a.close();
    expect(view.length).toBe(0);
    expect(a.isClosed).toBe(true);
    expect(shmListing()).toEqual(before);
    a.close(); // idempotent
  });

  it('attaching to a missing segment fails with NOT_FOUND (at once, or after timeoutMs)', async () => {
    const sessionDir = testSession();
    expect(await failure(ShmSegment.attach({ sessionDir, job: 'nope', index: 1 }))).toBe(
      'NOT_FOUND',
    );
    const t = Date.now();
    await expect(
      ShmSegment.attach({ sessionDir, job: 'nope', index: 1, timeoutMs: 100 }),
    ).rejects.toThrow(/waited 100 ms/);
    expect(Date.now() - t).toBeGreaterThanOrEqual(90);
  });

  it('attach waits (timeoutMs) for a creator that comes later', async () => {
    const sessionDir = testSession();
    const p = ShmSegment.attach({ sessionDir, job: 'late', index: 1, timeoutMs: 5000 });
    await new Promise((r) => setTimeout(r, 50));
    const a = create({ sessionDir, job: 'late', nprocs: 2 });
    const b = await p;
    open.push(b);
    expect(b.name).toBe(a.name);
  });

  it('creating a name that exists fails with EXISTS', async () => {
    const sessionDir = testSession();
    create({ sessionDir, nprocs: 2 });
    expect(await failure(() => create({ sessionDir, nprocs: 2 }))).toBe('EXISTS');
  });

  it('another job id: WRONG_JOB', async () => {
    const name = `/ssi-test-${process.pid}-wrongjob`;
    create({ name, job: 'alpha' });
    expect(await failure(ShmSegment.attach({ name, job: 'beta', index: 1 }))).toBe('WRONG_JOB');
    await expect(ShmSegment.attach({ name, job: 'beta', index: 1 })).rejects.toThrow(
      /job "alpha", not "beta"/,
    );
  });

  it('another layout version: BAD_LAYOUT; a foreign file: BAD_MAGIC; a truncated one: BAD_SIZE', async () => {
    const name = `/ssi-test-${process.pid}-layout`;
    const a = create({ name });
    a.i32[1] = LAYOUT_VERSION + 1;
    expect(await failure(ShmSegment.attach({ name, job: 'job1', index: 1 }))).toBe('BAD_LAYOUT');
    a.i32[1] = LAYOUT_VERSION;
    a.i32[5] = 7; // sizeHi: the header now claims 28 GiB more than the file has
    expect(await failure(ShmSegment.attach({ name, job: 'job1', index: 1 }))).toBe('BAD_SIZE');

    const foreign = `ssi-test-${process.pid}-foreign`;
    const fd = openSync(`/dev/shm/${foreign}`, 'w', 0o600);
    writeSync(fd, Buffer.alloc(4096, 0x41));
    closeSync(fd);
    try {
      expect(await failure(ShmSegment.attach({ name: `/${foreign}`, job: 'j', index: 0 }))).toBe(
        'BAD_MAGIC',
      );
      const tiny = `ssi-test-${process.pid}-tiny`;
      const fd2 = openSync(`/dev/shm/${tiny}`, 'w', 0o600);
      writeSync(fd2, Buffer.alloc(16));
      closeSync(fd2);
      expect(await failure(ShmSegment.attach({ name: `/${tiny}`, job: 'j', index: 0 }))).toBe(
        'BAD_SIZE',
      );
      unlinkSync(`/dev/shm/${tiny}`);
    } finally {
      unlinkSync(`/dev/shm/${foreign}`);
    }
  });

  it('a slot held by another live process: SLOT_TAKEN; a bad index: BAD_ARGS', async () => {
    const name = `/ssi-test-${process.pid}-slot`;
    const a = create({ name });
    // pretend slot 1 belongs to our parent (alive, not us)
    const line = (a.layout.procOffset + 64) >> 2;
    a.i32[line] = process.ppid;
    expect(await failure(ShmSegment.attach({ name, job: 'job1', index: 1 }))).toBe('SLOT_TAKEN');
    expect(await failure(ShmSegment.attach({ name, job: 'job1', index: 3 }))).toBe('BAD_ARGS');
    expect(await failure(ShmSegment.attach({ name, job: 'job1', index: -1 }))).toBe('BAD_ARGS');
  });

  it('bad names are refused with BAD_ARGS', async () => {
    expect(await failure(ShmSegment.attach({ name: 'no-slash', job: 'j', index: 0 }))).toBe(
      'BAD_ARGS',
    );
    expect(await failure(ShmSegment.attach({ name: '/a/b', job: 'j', index: 0 }))).toBe('BAD_ARGS');
    expect(await failure(ShmSegment.attach({ job: 'j', index: 0 }))).toBe('BAD_ARGS');
  });

  it('the SharedArrayBuffer variant maps the same memory', async () => {
    const sessionDir = testSession();
    const a = create({ sessionDir, nprocs: 2, buffer: 'sab' });
    expect(a.buffer).toBeInstanceOf(SharedArrayBuffer);
    const b = await ShmSegment.attach({ sessionDir, job: 'job1', index: 1 });
    open.push(b);
    expect(b.buffer).toBeInstanceOf(ArrayBuffer);
    Atomics.store(a.i32, a.layout.poolOffset >> 2, 99);
    expect(Atomics.load(b.i32, b.layout.poolOffset >> 2)).toBe(99);
  });
});

describe('memory accounting (issue 21)', () => {
  const MiB = 1024 * 1024;
  const mapped = (name: string) => readFileSync('/proc/self/maps', 'utf8').includes(name);

  it("a segment's ArrayBuffer is not counted as this process's external memory", () => {
    // V8 counted an external ArrayBuffer's whole length, and a rank's GC ran as if it had
    // allocated the node's N² postboxes (40 MiB at 64 ranks).
    const before = process.memoryUsage().external;
    const a = create({ nprocs: 2, poolSize: 64 * MiB, populate: false });
    expect(a.buffer.byteLength).toBeGreaterThan(64 * MiB);
    expect(process.memoryUsage().external - before).toBeLessThan(8 * MiB);
  });

  it('a segment dropped without close() is unmapped once it is collected', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const name = (() => {
      const s = ShmSegment.create({ sessionDir: testSession(), job: 'gc', nprocs: 1, poolSize: 0 });
      const view = new Uint8Array(s.buffer);
      view[0] = 1;
      return s.name;
    })();
    expect(mapped(name.slice(1))).toBe(true);
    for (let i = 0; i < 20 && mapped(name.slice(1)); i++) {
      gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(mapped(name.slice(1))).toBe(false);
  });
});
