import { statSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { checkpointableJobPerTest, jobDir, lamcheckpoint, lamrestart } from './cr-harness';

// The "messages in flight at the checkpoint (large and small) arrive after restart": the
// sender completed its (eager) sends before the checkpoint and is blocked elsewhere, the receiver
// had not received them. After continue and after a restart the receiver gets both, every byte
// checked, and the sender does not send them again.
const LARGE = 64 * 1024;
const SHORT = String(LARGE * 2); // above the large message: it is eager, the send completes

const jobs = checkpointableJobPerTest();

it('a small and a large message sent before the checkpoint arrive after continue and after restart', async () => {
  const { job, root } = jobs.start(
    2,
    'in-flight.mjs',
    [String(LARGE)],
    ['--ssi', 'rpi_tcp_short', SHORT],
  );
  await job.lines(/rank 0: both sends complete/, 1, 'the sender to complete both sends');
  await job.lines(/rank 1: sleeping/, 1, 'the receiver to sleep');
  const ckpt = await lamcheckpoint(job.pid);
  expect(ckpt.stdout + ckpt.stderr, 'lamcheckpoint').toMatch(/checkpoint series 1 of job/);
  expect(ckpt.code).toBe(0);
  const first = await job.done;
  expect(first.code, job.out).toBe(0);
  expect(job.out.match(/in-flight OK \(continued\)/g)?.length, job.out).toBe(2);

  // The receiver's file holds the two messages (the MPI layer's image), the sender's does not.
  const dir = jobDir(root);
  expect(statSync(join(dir, 'series-1', 'rank-1.ckpt')).size).toBeGreaterThan(LARGE + 1000);
  expect(statSync(join(dir, 'series-1', 'rank-0.ckpt')).size).toBeLessThan(LARGE);

  const restarted = await lamrestart(dir);
  const text = restarted.stdout + restarted.stderr;
  expect(restarted.code, text).toBe(0);
  expect(text.match(/in-flight OK \(restarted from series 1\)/g)?.length, text).toBe(2);
  // The sender resumed after its sends: it did not send again.
  expect(text).not.toMatch(/both sends complete/);
});
