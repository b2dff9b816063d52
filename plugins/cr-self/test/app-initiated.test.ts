import { expect, it } from 'vitest';
import { checkpointableJobPerTest, jobDir, lamrestart } from './cr-harness';

// The issue: checkpoints "asked for ... by the application itself (a collective `checkpoint()`)".
// Every rank calls it, at different moments; all resolve with the same series, and the job
// restarts from it.
const jobs = checkpointableJobPerTest();

it('mpi.cr.checkpoint() called by every rank resolves everywhere with the one series taken', async () => {
  const { job, root } = jobs.start(3, 'app-checkpoint.mjs');
  const ended = await job.done;
  expect(ended.code, job.out).toBe(0);
  for (const rank of [0, 1, 2]) {
    expect(job.out).toContain(`rank ${rank}: checkpoint() resolved with series 1\n`);
  }
  expect(job.out.match(/app-checkpoint OK \(continued\)/g)?.length, job.out).toBe(3);

  const restarted = await lamrestart(jobDir(root));
  const text = restarted.stdout + restarted.stderr;
  expect(restarted.code, text).toBe(0);
  expect(text.match(/app-checkpoint OK \(restarted from series 1\)/g)?.length, text).toBe(3);
  expect(text).not.toMatch(/checkpoint\(\) resolved/);
});
