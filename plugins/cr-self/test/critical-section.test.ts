import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import {
  checkpointRoot,
  FIXTURES,
  jobDir,
  lamcheckpoint,
  type RunningJob,
  startJob,
} from './cr-harness';

// The issue (AVS seed 002): "critical sections (block / unblock checkpoints, nestable) delay a
// checkpoint without losing it".
let job: RunningJob | undefined;
let cleanup: (() => void) | undefined;
afterEach(() => {
  job?.kill();
  cleanup?.();
  job = undefined;
  cleanup = undefined;
});

it('a checkpoint requested inside a nested critical section is taken after the outermost unblock', async () => {
  const ck = checkpointRoot();
  cleanup = ck.cleanup;
  const unblock = join(ck.root, 'unblock');
  const root = join(ck.root, 'ckpt');
  job = startJob([
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
    root,
    join(FIXTURES, 'critical-section.mjs'),
    unblock,
  ]);
  await job.lines(/rank 1: in critical section/, 1, 'rank 1 to enter its critical section');
  await job.lines(/rank 0: ready/, 1, 'rank 0 to wait');
  let answered = false;
  const asked = lamcheckpoint(job.pid).finally(() => {
    answered = true;
  });
  await new Promise((r) => setTimeout(r, 1500)); // the request reaches rank 1 and waits there
  expect(answered, 'lamcheckpoint answered while rank 1 was in its critical section').toBe(false);
  expect(job.out).not.toMatch(/checkpoint taken/);
  expect(existsSync(join(jobDir(root), 'series-1', 'MANIFEST.json'))).toBe(false);

  writeFileSync(unblock, '');
  const r = await asked;
  expect(r.stdout + r.stderr).toMatch(/checkpoint series 1 of job/);
  expect(r.code).toBe(0);
  const ended = await job.done;
  expect(ended.code, job.out).toBe(0);
  expect(job.out.match(/critical-section OK/g)?.length, job.out).toBe(2);
  // Taken after the outermost unblock, not after the inner one.
  const left = job.out.indexOf('rank 1: left critical section');
  const taken = job.out.indexOf('rank 1: checkpoint taken (blocked=false)');
  expect(left, job.out).toBeGreaterThan(job.out.indexOf('rank 1: inner unblock'));
  expect(taken, job.out).toBeGreaterThan(left);
  expect(job.out).not.toMatch(/blocked=true/);
});
