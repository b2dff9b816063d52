import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { checkpointableJobPerTest, FIXTURES, type RunningJob, startJob } from './cr-harness';

// MPI.init's warm-up of the message paths (`mpi_base_warm_up` of @ssi/mpi: three messages to
// itself on COMM_SELF) never runs with a crmpi module, whose rollback log and restart replay
// must see the program's messages only; without one it runs on every rank. Real jobs, read
// from mpi_verbose 10.
const jobs = checkpointableJobPerTest();
let plain: RunningJob | undefined;
afterEach(() => {
  plain?.kill();
  plain = undefined;
});

const RAN = /rehearsed the message paths/g;
const SKIPPED = /no warm-up of the message paths: a crmpi module is selected/g;

it('does not run in a checkpointable job', async () => {
  const { job } = jobs.start(2, 'init-only.mjs', [], ['--ssi', 'mpi_verbose', '10']);
  const r = await job.done;
  expect(r.code, job.out).toBe(0);
  expect(job.out.match(/rank \d: initialized/g)?.length, job.out).toBe(2);
  expect(job.out.match(SKIPPED)?.length, job.out).toBe(2);
  expect(job.out).not.toMatch(RAN);
});

it('runs on every rank of a job without a crmpi module', async () => {
  plain = startJob(['-np', '2', '--ssi', 'mpi_verbose', '10', join(FIXTURES, 'init-only.mjs')]);
  const r = await plain.done;
  expect(r.code, plain.out).toBe(0);
  expect(plain.out.match(RAN)?.length, plain.out).toBe(2);
  expect(plain.out).not.toMatch(SKIPPED);
});
