import { COLLECTIVE_CASES, collectivesProgram, killAllJobs, runJob } from '@ssi/mpi/testing';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The collectives suite as @ssi/mpi's README and docs/writing-a-coll-module.md tell an author to
 * run it: every case, `ssi: { coll: '<name>' }`, nothing else (no coll_base_timeout, the
 * launcher's default time limit). bad-input must pass within it.
 */
afterAll(() => killAllJobs());

describe('the documented invocation of the collectives suite', () => {
  it('passes every case as written, bad-input included', async () => {
    const r = await runJob({
      np: 3,
      program: collectivesProgram,
      args: [...COLLECTIVE_CASES],
      ssi: { coll: 'lam_basic' },
    });
    for (const c of COLLECTIVE_CASES) expect(r.output).toContain(`case ${c} ok`);
  });
});
