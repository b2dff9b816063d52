import { explainJob, killAllJobs, launchJob } from '@ssi/mpi/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { layout } from './helpers/layout';

/**
 * An erroneous program whose ranks pass buffers of different lengths, in real processes on node
 * layouts where smp serves the communicator and moves large buffers through shared areas. bcast:
 * ERR_TRUNCATE exactly on the ranks whose buffer is shorter than the root's, the root's data on
 * the others. reduce and allreduce: ERR_TRUNCATE on every rank. Always: no byte written outside
 * a buffer, no wait for coll_base_timeout (kept short, so a hang shows as ERR_OTHER) and the
 * communicator still in step (fixtures/smp-mismatch.mjs).
 */
afterEach(() => killAllJobs());

const program = new URL('./fixtures/smp-mismatch.mjs', import.meta.url).pathname;

describe('bcast, reduce and allreduce with buffers of different lengths under smp', () => {
  /**
   * The thresholds set so that the fixture's lengths fall on both sides of them: bcast roots of
   * 100 000 bytes (whole, one message per level) where another rank passes 4 MiB, reductions of
   * 800 bytes (to lam_basic) where the others pass 4 MiB. Every rank must take the same path.
   */
  const thresholds = {
    coll_smp_bcast_min_bytes: 1 << 20,
    coll_smp_reduce_min_bytes: 4096,
    coll_smp_allreduce_min_bytes: 4096,
  };
  it.each([
    [[2, 2], 'sm', 4194304, 1, {}],
    [[2, 2], 'tcp', 262144, 0, {}],
    [[2, 1, 2, 2], 'sm', 1048576, 1, {}],
    [[2, 2], 'sm', 4194304, 1, thresholds],
    // Striped (every large root buffer of one piece): a short leader, short and long readers.
    [[2, 2], 'tcp', 4194304, 1, { coll_smp_bcast_stripe_min_bytes: 4096 }],
  ] as const)(
    'layout %j over %s, pieces of %d bytes, single copy %d, %j',
    async (perNode, rpi, chunk, singleCopy, extra) => {
      const l = layout(perNode);
      const r = await launchJob({
        np: l.np,
        rankEnv: l.rankEnv,
        program,
        args: [String(chunk)],
        ssi: {
          rpi,
          coll: 'smp',
          coll_verbose: 10,
          coll_base_timeout: 20,
          coll_smp_shm_chunk_bytes: chunk,
          coll_smp_shm_single_copy: singleCopy,
          ...extra,
        },
        timeoutMs: 240_000,
        label: `smp mismatched buffers on ${l.name} over ${rpi}`,
      });
      expect(r.ok, explainJob(r)).toBe(true);
      expect(r.output.match(/mismatch ok at rank \d/g)).toHaveLength(l.np);
      expect(r.output).toMatch(
        singleCopy
          ? /mismatch: smp: node \d shares an area of \d+ bytes \(pieces of \d+, bcast by single copy(, striped between nodes)?\)/
          : /mismatch: smp: node \d shares an area of \d+ bytes \(pieces of \d+\)/,
      );
      if ('coll_smp_bcast_stripe_min_bytes' in extra)
        expect(r.output).toMatch(/mismatch: smp: .*striped between nodes/);
    },
  );
});
