import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { FastYield } from '../src/progress/fast-yield';
import { choosePolling, WaitPoller } from '../src/progress/wait-poller';

/** The progress engine's parts in one process (issue 18); the real-process tests are tcp's. */

describe('choosePolling', () => {
  it('polls mpi_base_poll_us when the node has no more ranks than cores', () => {
    const c = choosePolling(100, false, 0, 2, 2, 0.5);
    expect(c).toMatchObject({ budgetUs: 100, oversubscribed: false, nodeRanks: 2, cores: 2 });
    expect(c.reason).toContain('polls 100 µs per wait');
  });

  it('backs off to mpi_base_poll_oversubscribed_us with more ranks than cores', () => {
    const c = choosePolling(100, false, 0, 8, 2, 0.5);
    expect(c).toMatchObject({ budgetUs: 0, oversubscribed: true });
    expect(c.reason).toContain('never polls');
    expect(c.reason).toContain('oversubscribed (8 ranks on 2 cores)');
    expect(choosePolling(100, false, 20, 3, 2, 0.5).budgetUs).toBe(20);
  });

  it('backs off too when the load average reaches the cores (other programs keep them busy)', () => {
    const c = choosePolling(100, false, 0, 2, 2, 2.5);
    expect(c).toMatchObject({ budgetUs: 0, oversubscribed: true, load: 2.5 });
    expect(c.reason).toContain('oversubscribed (load 2.5 on 2 cores)');
    expect(choosePolling(100, false, 0, 2, 2, 1.9).budgetUs).toBe(100);
  });

  it('keeps an explicitly set mpi_base_poll_us even when oversubscribed', () => {
    expect(choosePolling(50, true, 0, 8, 2, 9).budgetUs).toBe(50);
  });

  it('treats a negative window as 0 (never polls)', () => {
    expect(choosePolling(-5, true, 0, 1, 2, 0).budgetUs).toBe(0);
  });
});

describe('WaitPoller', () => {
  const turnsAfter = async (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('turns the event loop while a call waits, and stops when the wait ends', async () => {
    const p = new WaitPoller(1_000_000);
    const since = p.hold();
    await turnsAfter(20);
    const during = p.turns;
    expect(during).toBeGreaterThan(0);
    expect(p.polling).toBe(true);
    p.release(since);
    await turnsAfter(20);
    expect(p.polling).toBe(false);
    const after = p.turns;
    await turnsAfter(20);
    expect(p.turns).toBe(after);
  });

  it('stops at the end of its window although the call still waits', async () => {
    const p = new WaitPoller(2000); // 2 ms
    const first = p.hold();
    await turnsAfter(40);
    expect(p.polling).toBe(false);
    const t = p.turns;
    await turnsAfter(20);
    expect(p.turns).toBe(t);
    // a new wait opens a new window
    const second = p.hold();
    expect(p.polling).toBe(true);
    p.release(first);
    p.release(second);
  });

  it('halves its window after waits longer than the budget and doubles it after short ones', () => {
    const p = new WaitPoller(160);
    const long = performance.now() - 1; // began 1 ms ago: longer than 160 µs
    p.hold();
    p.release(long);
    expect(p.windowUs).toBe(80);
    for (let i = 0; i < 10; i++) {
      p.hold();
      p.release(long);
    }
    expect(p.windowUs).toBe(10); // a sixteenth at least
    const short = p.hold(); // ends at once: a short wait
    p.release(short);
    expect(p.windowUs).toBe(20);
    for (let i = 0; i < 10; i++) p.release(p.hold());
    expect(p.windowUs).toBe(160); // the budget at most
  });

  it('never polls with a window of 0', async () => {
    const p = new WaitPoller(0);
    p.hold();
    await turnsAfter(10);
    expect(p.turns).toBe(0);
    expect(p.polling).toBe(false);
  });
});

describe('FastYield', () => {
  it('asks every n-th call in a row that completed at once to yield', () => {
    const y = new FastYield(4);
    const got = Array.from({ length: 8 }, () => y.completedAtOnce());
    expect(got).toEqual([false, false, false, true, false, false, false, true]);
  });

  it('starts counting again after a call that waited', () => {
    const y = new FastYield(3);
    y.completedAtOnce();
    y.completedAtOnce();
    y.waited();
    expect([y.completedAtOnce(), y.completedAtOnce(), y.completedAtOnce()]).toEqual([
      false,
      false,
      true,
    ]);
  });

  it('never yields with 0', () => {
    const y = new FastYield(0);
    expect(Array.from({ length: 100 }, () => y.completedAtOnce()).some(Boolean)).toBe(false);
  });
});
