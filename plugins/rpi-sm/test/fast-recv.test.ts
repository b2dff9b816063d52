import { explainJob, killAllJobs, launchJob } from '@ssi/mpi/testing';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * The fast blocking receive of the sm rpi (`RpiActions.fastrecv`): a blocking receive from one
 * on-node peer, while nothing else is active, takes the peer's next postbox record in place.
 * Real processes; the fixture checks every byte and status, the finalize reports (rpi_verbose
 * 10) tell how many receives the fast path completed.
 */
afterEach(() => killAllJobs());

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url).pathname;

describe('sm rpi: the fast blocking receive', () => {
  it.each(['spin', 'hybrid', 'block'])(
    'keeps the order, errors and acknowledgements of the usual path, and takes a ping-pong (rpi_sm_wait %s)',
    async (mode) => {
      const r = await launchJob({
        np: 2,
        program: fixture('fast-recv.mjs'),
        ssi: { rpi: 'sm', rpi_sm_wait: mode, rpi_verbose: 10 },
        timeoutMs: 60_000,
        label: `blocking receives over sm that the fast path takes or leaves (${mode})`,
      });
      expect(r.ok, explainJob(r)).toBe(true);
      expect(r.output).toContain('fast-recv: every case passed');
      const fast = new Map(
        [...r.output.matchAll(/rank (\d) sm messages .*?fast receives (\d+)/g)].map((m) => [
          m[1],
          Number(m[2]),
        ]),
      );
      expect([...fast.keys()].sort(), r.output).toEqual(['0', '1']);
      // Rank 0 waits (synchronously) before its receives of each case, so some of their messages
      // sit in the postbox when the receive begins: those the fast path takes in every mode, even
      // where both ranks share one busy core (where a receive that spins first can never succeed).
      expect(fast.get('0'), r.output).toBeGreaterThan(0);
    },
  );
});
