import { explainJob, killAllJobs, launchJob, topologyProgram } from '@ssi/mpi/testing';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * Process topologies in real processes over tcp: 1-, 2- and 3-D grids (periodic and not, with
 * and without reorder; every shift checked by a message from the neighbour), a grid smaller than
 * the job, cartSub, dup, graphs and distributed graphs, and bad input (MPI error classes).
 */
afterEach(() => killAllJobs());

describe('process topologies', () => {
  it.each([1, 2, 3, 4, 6, 8])('on %i ranks', async (np) => {
    const r = await launchJob({
      np,
      program: topologyProgram,
      ssi: { rpi: 'tcp', coll: 'lam_basic' },
      timeoutMs: 120_000,
      label: `topology on ${np} ranks`,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    for (const c of ['grids', 'partial grid', 'graphs', 'bad input']) {
      expect(r.output).toContain(`case ${c} ok`);
    }
  });
});
