import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { checkpointRoot, FIXTURES, lamcheckpoint, type RunningJob, startJob } from './cr-harness';

// The issue: "a rank that is computing and not inside MPI still gets the request ... give the
// application a cheap way to offer a safe point". A loop calling mpi.cr.safePoint() is
// checkpointed; one that never yields is retried and refused with the reason, and the job
// goes on intact.
let job: RunningJob | undefined;
let cleanup: (() => void) | undefined;
afterEach(() => {
  job?.kill();
  cleanup?.();
  job = undefined;
  cleanup = undefined;
});

function computeJob(mode: 'safe' | 'never'): string {
  const ck = checkpointRoot();
  cleanup = ck.cleanup;
  const stop = join(ck.root, 'stop');
  job = startJob(
    [
      '-np',
      '2',
      '--ssi',
      'cr',
      'self',
      '--ssi',
      'rpi',
      'crtcp',
      '--ssi',
      'crlam_self_dir',
      join(ck.root, 'ckpt'),
      '--ssi',
      'crlam_base_prepare_timeout',
      '300',
      '--ssi',
      'crlam_base_prepare_attempts',
      '2',
      join(FIXTURES, 'compute.mjs'),
      mode,
      stop,
    ],
    process.env,
    45_000, // a rank left behind the closed gate fails here, not at the test's timeout
  );
  return stop;
}

it('a rank computing with mpi.cr.safePoint() in its loop is checkpointed while it computes', async () => {
  const stop = computeJob('safe');
  await job!.lines(/rank 1: computing/, 1, 'rank 1 to compute');
  const r = await lamcheckpoint(job!.pid);
  expect(r.stdout + r.stderr).toMatch(/checkpoint series 1 of job/);
  expect(r.code).toBe(0);
  expect(job!.out).toMatch(/rank 1: checkpointed while computing \(iteration [1-9]\d*\)/);
  expect(job!.out).not.toMatch(/rank 1: computed/);
  writeFileSync(stop, '');
  const ended = await job!.done;
  expect(ended.code, job!.out).toBe(0);
  expect(job!.out.match(/compute OK/g)?.length, job!.out).toBe(2);
});

it('a rank that never yields: retried, then refused naming crlam_base_prepare_timeout; the job ends intact', async () => {
  const stop = computeJob('never');
  await job!.lines(/rank 1: computing/, 1, 'rank 1 to compute');
  const r = await lamcheckpoint(job!.pid);
  expect(r.stdout).toMatch(/rank\(s\) 1 did not interrupt within 300 ms .*attempt 1 of 2/);
  expect(r.stdout, r.stdout + r.stderr).toMatch(/attempt 2 of 2/);
  expect(r.stderr).toMatch(
    /checkpoint refused: not every rank could be interrupted in 2 attempts \(see crlam_base_prepare_timeout\)/,
  );
  expect(r.code).toBe(1);
  writeFileSync(stop, '');
  const ended = await job!.done;
  expect(ended.code, job!.out).toBe(0);
  expect(job!.out).not.toMatch(/checkpointed while computing/);
  expect(job!.out.match(/compute OK/g)?.length, job!.out).toBe(2);
});
