import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { FastYield } from '../src/progress/fast-yield';
import { choosePolling, cpuPool, type PollInputs } from '../src/progress/poll-policy';
import { RunDelay, readSchedstat } from '../src/progress/run-delay';
import {
  GIVE_WAY_MAX_BYTES,
  RECHECK_MS,
  TRANSFER_BYTES_PER_US,
  WaitPoller,
} from '../src/progress/wait-poller';

/** The progress engine's parts in one process (issue 18); the real-process tests are tcp's. */

describe('choosePolling', () => {
  /** 2 ranks on a quiet 2-core node, unbound, mpi_base_poll_us 100 by default. */
  const base: PollInputs = {
    requestedUs: 100,
    explicit: false,
    oversubscribedUs: 50,
    oversubscribedExplicit: false,
    sharedUs: 0,
    yieldPerCore: 2,
    yielding: { ok: true },
    nodeRanks: 2,
    cores: 2,
    load: 0.5,
    contention: 0.1,
    allowedCpus: 2,
  };

  it('polls mpi_base_poll_us when the node has no more ranks than cores', () => {
    const c = choosePolling(base);
    expect(c).toMatchObject({ budgetUs: 100, oversubscribed: false, shared: false, cores: 2 });
    expect(c.reason).toContain('polls 100 µs per wait');
  });

  it('polls mpi_base_poll_oversubscribed_us with yields with up to 2 ranks per core', () => {
    const c = choosePolling({ ...base, nodeRanks: 4 });
    expect(c).toMatchObject({ budgetUs: 50, oversubscribed: true, yields: true });
    expect(c.reason).toContain('polls 50 µs per wait, giving the CPU away at every turn');
    expect(c.reason).toContain(
      'oversubscribed (4 ranks on 2 cores): mpi_base_poll_oversubscribed_us 50 with yields',
    );
    expect(choosePolling({ ...base, nodeRanks: 3, oversubscribedUs: 20 }).budgetUs).toBe(20);
    // bound or not: the job's own ranks share the cores
    expect(choosePolling({ ...base, nodeRanks: 3, allowedCpus: 1 })).toMatchObject({
      budgetUs: 50,
      yields: true,
    });
    // a window of 0 polls nothing, so nothing yields
    const none = choosePolling({ ...base, nodeRanks: 3, oversubscribedUs: 0 });
    expect(none).toMatchObject({ budgetUs: 0, yields: false });
    expect(none.reason).toContain('never polls');
  });

  it('sleeps at once with more ranks per core than mpi_base_poll_yield, or 0', () => {
    const c = choosePolling({ ...base, nodeRanks: 8 });
    expect(c).toMatchObject({ budgetUs: 0, oversubscribed: true, yields: false });
    expect(c.reason).toContain('never polls');
    expect(c.reason).toContain(
      'mpi_base_poll_oversubscribed_us 0 without yields (4 ranks per core, more than mpi_base_poll_yield 2)',
    );
    expect(choosePolling({ ...base, nodeRanks: 5 }).yields).toBe(false); // 3 on one core
    expect(choosePolling({ ...base, nodeRanks: 8, yieldPerCore: 4 }).yields).toBe(true);
    expect(choosePolling({ ...base, nodeRanks: 4, yieldPerCore: 0 })).toMatchObject({
      budgetUs: 0,
      yields: false,
    });
  });

  it('sleeps at once when other programs keep the cores busy beyond what its own ranks cause', () => {
    // 2 ranks per core, all polling: each waits about as long as it runs
    expect(choosePolling({ ...base, nodeRanks: 4, contention: 1.2 })).toMatchObject({
      budgetUs: 50,
      yields: true,
    });
    const busy = choosePolling({ ...base, nodeRanks: 4, contention: 1.6 });
    expect(busy).toMatchObject({ budgetUs: 0, yields: false, shared: true });
    expect(busy.reason).toContain(
      'without yields (other programs keep the cores busy: waited 1.60 ns for a CPU per ns run)',
    );
    // unknown CPU wait: a load above the job's ranks plus the cores
    expect(choosePolling({ ...base, nodeRanks: 4, contention: null, load: 5.9 }).yields).toBe(true);
    expect(choosePolling({ ...base, nodeRanks: 4, contention: null, load: 6 }).yields).toBe(false);
  });

  it('sleeps at once without the @ssi/sched addon, unless the window was set', () => {
    const noAddon = { ok: false as const, reason: 'the @ssi/sched native addon is not built' };
    const c = choosePolling({ ...base, nodeRanks: 4, yielding: noAddon });
    expect(c).toMatchObject({ budgetUs: 0, oversubscribed: true, yields: false });
    expect(c.reason).toContain(
      'mpi_base_poll_oversubscribed_us 0 without yields (the @ssi/sched native addon is not built)',
    );
    const set = choosePolling({
      ...base,
      nodeRanks: 4,
      yielding: noAddon,
      oversubscribedUs: 30,
      oversubscribedExplicit: true,
    });
    expect(set).toMatchObject({ budgetUs: 30, yields: false });
    expect(set.reason).toContain('polls 30 µs per wait, then sleeps');
  });

  it('backs off when it waits for a CPU, only while the process is not bound to one CPU', () => {
    const c = choosePolling({ ...base, contention: 0.8 });
    expect(c).toMatchObject({ budgetUs: 0, oversubscribed: false, shared: true, contention: 0.8 });
    expect(c).toMatchObject({ yields: false });
    expect(c.reason).toContain(
      'busy cores (waited 0.80 ns for a CPU per ns run) and not bound to one CPU: mpi_base_poll_shared_us 0',
    );
    expect(choosePolling({ ...base, contention: 0.8, sharedUs: 40 }).budgetUs).toBe(40);
    expect(choosePolling({ ...base, contention: 0.49 }).budgetUs).toBe(100);
    const bound = choosePolling({ ...base, contention: 2, allowedCpus: 1 });
    expect(bound).toMatchObject({ budgetUs: 100, shared: false });
    expect(bound.reason).toContain('CPU wait 2.00 per run, load 0.5, bound to 1 CPU');
  });

  it('ignores the load average where the CPU wait is known (a niced build, the job itself)', () => {
    expect(choosePolling({ ...base, load: 12, contention: 0.2 }).budgetUs).toBe(100);
  });

  it('falls back to the load average where the CPU wait is unknown', () => {
    const c = choosePolling({ ...base, load: 2.5, contention: null });
    expect(c).toMatchObject({ budgetUs: 0, shared: true });
    expect(c.reason).toContain('busy cores (load 2.5 on 2) and not bound to one CPU');
    expect(c.reason).not.toContain('CPU wait');
    expect(choosePolling({ ...base, load: 1.9, contention: null }).budgetUs).toBe(100);
  });

  it('keeps an explicitly set mpi_base_poll_us even when oversubscribed or busy', () => {
    expect(choosePolling({ ...base, requestedUs: 50, explicit: true, nodeRanks: 8 }).budgetUs).toBe(
      50,
    );
    expect(
      choosePolling({ ...base, requestedUs: 50, explicit: true, contention: 3 }).budgetUs,
    ).toBe(50);
  });

  it('treats a negative window as 0 (never polls)', () => {
    expect(choosePolling({ ...base, requestedUs: -5, explicit: true }).budgetUs).toBe(0);
  });
});

describe('RunDelay', () => {
  /** A fake schedstat: [ns run, ns waited] as the test sets them. */
  const clock = (run: number, wait: number) => {
    const now: [number, number] = [run, wait];
    return { now, read: (): readonly [number, number] => [now[0], now[1]] };
  };

  it('starts with the ratio since the process started', () => {
    expect(new RunDelay(clock(200e6, 50e6).read).sample()).toBe(0.25);
  });

  it('measures each interval that ran long enough, and keeps the last one until then', () => {
    const c = clock(100e6, 0);
    const d = new RunDelay(c.read, 5e6);
    c.now[0] += 10e6;
    c.now[1] += 8e6;
    expect(d.sample()).toBeCloseTo(0.8);
    c.now[0] += 1e6; // too little run time to say anything new
    c.now[1] += 0;
    expect(d.sample()).toBeCloseTo(0.8);
    c.now[0] += 9e6; // with the previous 1 ms: 10 ms run, 1 ms waited
    c.now[1] += 1e6;
    expect(d.sample()).toBeCloseTo(0.1);
  });

  it('is unknown where the system does not tell', () => {
    expect(new RunDelay(() => null).sample()).toBeNull();
  });

  it('reads this process on Linux', () => {
    const own = readSchedstat();
    if (process.platform !== 'linux') return expect(own).toBeNull();
    expect(own).not.toBeNull();
    expect(own![0]).toBeGreaterThan(0);
  });
});

describe('cpuPool', () => {
  it("is the CPUs this process may use, or the node's when it is bound to one", () => {
    expect(cpuPool(2, () => 64)).toBe(2); // a cpuset of 2 on a 64-core node
    expect(cpuPool(1, () => 2)).toBe(2); // bound to one CPU: the node's cores
    expect(cpuPool(1, () => 0)).toBe(1);
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

  it('asks recheck for a new budget at the first wait after RECHECK_MS, not before', async () => {
    let asked = 0;
    let budget = 0;
    const p = new WaitPoller(100, () => {
      asked++;
      return budget;
    });
    p.release(p.hold());
    expect(asked).toBe(0);
    budget = 0; // the machine got busy: the next check turns polling off
    await turnsAfter(RECHECK_MS + 20);
    const since = p.hold();
    expect(asked).toBe(1);
    expect(p.budgetUs).toBe(0);
    expect(p.polling).toBe(false);
    p.release(since);
    p.release(p.hold()); // within RECHECK_MS of the check: not asked again
    expect(asked).toBe(1);
    budget = 200;
    await turnsAfter(RECHECK_MS + 20);
    const again = p.hold();
    expect([asked, p.budgetUs, p.windowUs, p.polling]).toEqual([2, 200, 200, true]);
    p.release(again);
  });

  it("polls a send's transfer time longer, and does not count it against the window", async () => {
    const p = new WaitPoller(1000); // 1 ms
    const bytes = 2000 * 1000 * TRANSFER_BYTES_PER_US; // 2 s of transfer
    const since = p.hold(bytes);
    await turnsAfter(40); // far past the 1 ms window
    expect(p.polling).toBe(true);
    p.release(since, bytes);
    expect(p.windowUs).toBe(1000); // took 40 ms, less than its transfer time: a short wait
    await turnsAfter(20);
    expect(p.polling).toBe(false);
    const long = performance.now() - 40;
    p.hold();
    p.release(long); // 40 ms without a message to show for it: a long wait
    expect(p.windowUs).toBe(500);
  });

  it('extends the polling while a long message arrives for a waiting call', async () => {
    const p = new WaitPoller(1000);
    p.extend(1e9); // nobody waits: nothing to poll for
    expect(p.polling).toBe(false);
    const since = p.hold();
    await turnsAfter(40);
    expect(p.polling).toBe(false); // the window is over: the call sleeps
    p.extend(2000 * 1000 * TRANSFER_BYTES_PER_US);
    expect(p.polling).toBe(true);
    const t = p.turns;
    await turnsAfter(20);
    expect(p.turns).toBeGreaterThan(t);
    p.release(since);
    await turnsAfter(20);
    expect(p.polling).toBe(false);
  });

  it('calls giveWay at every polling turn while it is set, and not after', async () => {
    const p = new WaitPoller(1_000_000);
    let gave = 0;
    p.giveWay = () => gave++;
    const since = p.hold();
    await turnsAfter(20);
    expect(gave).toBeGreaterThan(0);
    expect(gave).toBe(p.turns); // one per turn
    expect(p.givenAway).toBe(gave);
    p.giveWay = null;
    const before = gave;
    await turnsAfter(20);
    expect(p.turns).toBeGreaterThan(before);
    expect(gave).toBe(before);
    p.release(since);
  });

  it('giving the CPU away, a wait that moves GIVE_WAY_MAX_BYTES or more does not poll', async () => {
    const p = new WaitPoller(1_000_000);
    p.giveWay = () => {};
    const long = p.hold(GIVE_WAY_MAX_BYTES);
    expect(p.polling).toBe(false);
    p.extend(GIVE_WAY_MAX_BYTES); // a long message arriving does not start it either
    expect(p.polling).toBe(false);
    const short = p.hold(GIVE_WAY_MAX_BYTES - 1);
    expect(p.polling).toBe(true);
    p.release(short);
    p.release(long);
    await turnsAfter(20);
    // keeping the CPU, the same long wait polls (its transfer time and the window)
    p.giveWay = null;
    const kept = p.hold(GIVE_WAY_MAX_BYTES);
    expect(p.polling).toBe(true);
    p.release(kept);
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

  it('takes at most one turn per minGapMs, reading the clock only at every n-th call', () => {
    let t = 0;
    let reads = 0;
    const y = new FastYield(2, 1, () => {
      reads++;
      return t;
    });
    const calls = () => Array.from({ length: 4 }, () => y.completedAtOnce());
    expect(calls()).toEqual([false, true, false, false]); // the 2nd: first turn; the 4th: too soon
    expect(reads).toBe(2);
    t = 0.9;
    expect(calls()).toEqual([false, false, false, false]); // still within 1 ms of the turn at 0
    t = 1.0;
    expect(calls()).toEqual([false, true, false, false]);
  });

  it('never yields with 0', () => {
    const y = new FastYield(0);
    expect(Array.from({ length: 100 }, () => y.completedAtOnce()).some(Boolean)).toBe(false);
  });
});
