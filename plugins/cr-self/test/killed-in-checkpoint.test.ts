import { expect, it } from 'vitest';
import { checkpointableJobPerTest, jobDir, lamcheckpoint, lamrestart } from './cr-harness';

// The issue: "a rank killed in the middle of a checkpoint → that series is incomplete and never
// used, the previous one is". Rank 1 SIGKILLs itself inside its onCheckpoint handler of the
// second checkpoint.
const jobs = checkpointableJobPerTest();

it('a rank killed during series 2: the job ends saying so, lamrestart skips series 2 and restarts from series 1', async () => {
  const { job, root } = jobs.start(2, 'two-checkpoints.mjs', ['kill', '1']);
  await job.lines(/waiting for checkpoint 1/, 2, 'both ranks to wait for checkpoint 1');
  const first = await lamcheckpoint(job.pid);
  expect(first.stdout + first.stderr, 'first lamcheckpoint').toMatch(/checkpoint series 1 of job/);
  expect(first.code).toBe(0);

  await job.lines(/waiting for checkpoint 2/, 2, 'both ranks to wait for checkpoint 2');
  const second = await lamcheckpoint(job.pid);
  expect(second.stderr, 'second lamcheckpoint').toMatch(
    /lamcheckpoint: checkpoint refused: series 2 is incomplete and will not be used: the job ended during the checkpoint: rank 1 \(pid \d+ on n0\) was killed by SIGKILL/,
  );
  expect(second.code).toBe(1);

  const ended = await job.done;
  expect(ended.code, job.out).not.toBe(0);
  expect(job.out).toMatch(/killing myself in the middle of checkpoint 2/);
  expect(job.out, 'mpirun names the rank that died').toMatch(
    /mpirun: rank 1 \(pid \d+ on n0\) was killed by SIGKILL/,
  );

  const dir = jobDir(root);
  const restarted = await lamrestart(dir);
  const text = restarted.stdout + restarted.stderr;
  expect(text).toMatch(/lamrestart: skipping series 2: .*(manifest|MANIFEST)/);
  expect(text).toMatch(/from series 1 of/);
  expect(restarted.code, text).toBe(0);
  expect(text.match(/two-checkpoints OK \(restarted from series 1\)/g)?.length, text).toBe(2);
});
