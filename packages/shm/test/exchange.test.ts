import { afterEach, describe, expect, it } from 'vitest';
import {
  killAll,
  type Peer,
  shmListing,
  startFixture,
  testSession,
  waitExit,
  waitLine,
} from './helpers';

afterEach(killAll);

interface Result {
  index: number;
  fatal?: string;
  errors: string[];
  sent: Record<string, { msgs: number; bytes: number }>;
  got: Record<string, { msgs: number; bytes: number; pool: number }>;
}

async function exchange(nprocs: number, lock: 'spin' | 'block', durationMs: number, extra = {}) {
  const before = shmListing();
  const base = {
    sessionDir: testSession(),
    job: `x${nprocs}${lock}`,
    nprocs,
    lock,
    durationMs,
    shortLimit: 4096,
    poolSize: 1024 * 1024, // small: senders must wait for pool space
    poolBlock: 16 * 1024,
    maxLarge: 300 * 1024,
    ...extra,
  };
  const peers: Peer[] = [startFixture('exchange', { ...base, index: 0 })];
  await waitLine(peers[0]!, 'READY', 15_000, 'the creator to create the segment');
  for (let i = 1; i < nprocs; i++) peers.push(startFixture('exchange', { ...base, index: i }));
  const results: Result[] = [];
  for (const p of peers) {
    const line = await waitLine(
      p,
      'RESULT',
      durationMs + 30_000,
      'a process to finish its exchange',
    );
    const r = JSON.parse(line) as Result;
    results.push(r);
    if (r.fatal) {
      await Promise.all(peers.map((x) => waitExit(x, 30_000, 'the others to end').catch(() => {})));
      const all = peers.map((x, i) => `--- process ${i}:\n${x.out.join('\n')}\n${x.err.join('')}`);
      throw new Error(`process ${r.index} failed: ${r.fatal}\n${all.join('\n')}`);
    }
    expect(r.errors).toEqual([]);
    const { code } = await waitExit(p, 10_000, 'a process to exit after its exchange');
    expect(code).toBe(0);
  }
  // what i sent to j is exactly what j got from i
  let pooled = 0;
  let total = 0;
  for (const r of results) {
    for (const [to, s] of Object.entries(r.sent)) {
      const g = results[Number(to)]!.got[String(r.index)]!;
      expect(g.msgs).toBe(s.msgs);
      expect(g.bytes).toBe(s.bytes);
      pooled += g.pool;
      total += g.msgs;
    }
  }
  expect(total).toBeGreaterThan(100);
  expect(pooled).toBeGreaterThan(10); // the pool was exercised, not only the postboxes
  expect(shmListing()).toEqual(before);
  return { total, pooled };
}

describe('processes exchanging checksummed random-size messages', () => {
  it('2 processes, spin lock (usysv), postboxes and pool', async () => {
    await exchange(2, 'spin', 3000, { spinUs: 50 });
  }, 60_000);

  it('2 processes, blocking lock (sysv), postboxes and pool', async () => {
    await exchange(2, 'block', 3000);
  }, 60_000);

  it('4 processes, blocking lock (sysv), every ordered pair', async () => {
    await exchange(4, 'block', 3000);
  }, 60_000);

  it('4 processes, spin lock, more processes than cores, receiving from ANY', async () => {
    await exchange(4, 'spin', 2500, { spinUs: 20, any: true });
  }, 60_000);
});
