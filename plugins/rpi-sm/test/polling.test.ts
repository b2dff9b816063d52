import { explainJob, killAllJobs, launchJob } from '@ssi/mpi/testing';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * The synchronous polling path of the sm rpi (issue 15): waiting MPI calls spin on shared memory
 * inside the call, `test` and `iprobe` poll it, and neither keeps the event loop from the rest
 * of the process (the tcp half, timers). Real processes; ordering, never timing, decides.
 */
afterEach(() => killAllJobs());

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url).pathname;

describe('sm rpi: a blocking wait that spins on shared memory', () => {
  it.each(['spin', 'hybrid', 'block'])(
    'still receives from an off-node peer and runs a timer during the wait (rpi_sm_wait %s)',
    async (mode) => {
      const r = await launchJob({
        np: 5,
        nodes: ['127.0.0.2', '127.0.0.3', '127.0.0.4'],
        program: fixture('wait-fairness.mjs'),
        ssi: { rpi: 'sm', rpi_sm_wait: mode },
        timeoutMs: 60_000,
        label: `rank 0's on-node receive, released only by its own event loop (${mode})`,
      });
      expect(r.ok, explainJob(r)).toBe(true);
      expect(r.output).toContain('rank 0 saw off-node hello, timer, on-node released');
    },
  );
});

describe('sm rpi: test() and iprobe() poll shared memory', () => {
  it.each(['spin', 'hybrid', 'block'])(
    'while (!req.test()) {} completes eager, two-record, rendezvous and synchronous messages, and while (!iprobe()) {} a probe (rpi_sm_wait %s)',
    async (mode) => {
      const r = await launchJob({
        np: 2,
        program: fixture('test-loop.mjs'),
        ssi: { rpi: 'sm', rpi_sm_wait: mode },
        timeoutMs: 60_000,
        label: `test() loops over sm (${mode})`,
      });
      expect(r.ok, explainJob(r)).toBe(true);
      const loops = [...r.output.matchAll(/rank (\d) completed every loop \((\d+) tests/g)];
      expect(loops.map((m) => m[1]).sort()).toEqual(['0', '1']);
      // the loops ran (some test() said "not yet"), so polling in test() is what completed them
      expect(loops.reduce((n, m) => n + Number(m[2]), 0)).toBeGreaterThan(0);
    },
  );
});

describe("sm rpi: block mode polls in the MPI layer's window, then sleeps", () => {
  /** `woken by the endpoint N times` of both ranks' finalize reports (rpi_verbose 10). */
  async function wakeups(pollUs: number): Promise<number[]> {
    const r = await launchJob({
      np: 2,
      program: fixture('block-pingpong.mjs'),
      ssi: { rpi: 'sm', rpi_sm_wait: 'block', mpi_base_poll_us: pollUs, rpi_verbose: 10 },
      timeoutMs: 60_000,
      label: `a block-mode ping-pong, mpi_base_poll_us ${pollUs}`,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output).toContain('rank 0 finished 200 rounds');
    expect(r.output).toContain('rank 1 finished 200 rounds');
    const counts = [...r.output.matchAll(/woken by the endpoint (\d+) times/g)].map((m) =>
      Number(m[1]),
    );
    expect(counts, r.output).toHaveLength(2);
    return counts;
  }

  it('a wait takes its message in the polling window (mpi_base_poll_us 1 s), not from a wake-up', async () => {
    // every reply comes well within a second, so no message needs the endpoint's futex event
    // (a few may, when a peer-liveness timeout of the helper thread drains the postbox first)
    for (const n of await wakeups(1_000_000)) expect(n).toBeLessThan(20);
  });

  it('with mpi_base_poll_us 0 the waits sleep and the endpoint wakes them', async () => {
    // the other side of the comparison: nobody polls, so the event wakes most receives (measured:
    // 261-397 of the 400; a message that comes while its receiver is still awake from its last
    // send is taken without one)
    const [a, b] = await wakeups(0);
    expect(a! + b!).toBeGreaterThanOrEqual(100);
  });
});
