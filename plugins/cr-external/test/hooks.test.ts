import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import {
  FIXTURES,
  jobDir,
  lamcheckpoint,
  type RunningJob,
  startJob,
  workDir,
} from './external-harness';

// The issue: "The AVS hooks are exposed for a checkpointer that drives the job itself, plus the
// application-initiated checkpoint". A checkpointer in the program (fixtures/hooks.mjs) freezes
// the job, then unfreezes it; freezes it and restores it (new connections); answers a checkpoint
// started by lamcheckpoint through its onFreeze handler; and mpi.cr.checkpoint() works too — with
// messages streaming from rank 0 to rank 1 throughout, each checked in order.
let job: RunningJob | undefined;
let cleanup: (() => void) | undefined;
afterEach(() => {
  job?.kill();
  cleanup?.();
  job = undefined;
  cleanup = undefined;
});

it('freeze/unfreeze, freeze/restore, a lamcheckpoint through onFreeze and mpi.cr.checkpoint()', async () => {
  const w = workDir();
  cleanup = w.cleanup;
  job = startJob([
    '-np',
    '2',
    '--ssi',
    'cr',
    'external',
    '--ssi',
    'crmpi_external_backend',
    'hooks',
    '--ssi',
    'rpi',
    'crtcp',
    '--ssi',
    'crlam_external_dir',
    w.root,
    '--ssi',
    'crlam_external_keep',
    '10',
    join(FIXTURES, 'hooks.mjs'),
    w.ctl,
  ]);
  await job.lines(/waiting for lamcheckpoint/, 2, 'both ranks to have frozen the job twice');
  const r = await lamcheckpoint(job.pid);
  expect(r.stdout + r.stderr, job.out).toMatch(/checkpoint series 3 of job/);
  writeFileSync(join(w.ctl, 'go'), '');
  const end = await job.done;
  expect(end.code, job.out).toBe(0);
  for (const rank of [0, 1]) {
    expect(job.out).toContain(
      `rank ${rank}: hooks OK freeze:1 unfreeze:1:r0 freeze:2 restore:2:r1 handler:3 handler:4 app:4`,
    );
  }
  const dir = jobDir(w.root);
  for (const s of [1, 2]) {
    expect(existsSync(join(dir, `series-${s}`, 'external-1', 'image', 'saved-by-hooks'))).toBe(
      true,
    );
  }
});

it('with the hooks back end and no checkpointer in the program, the series is given up after crmpi_external_timeout', async () => {
  const w = workDir();
  cleanup = w.cleanup;
  job = startJob([
    '-np',
    '2',
    '--ssi',
    'cr',
    'external',
    '--ssi',
    'crmpi_external_backend',
    'hooks',
    '--ssi',
    'crmpi_external_timeout',
    '2',
    '--ssi',
    'rpi',
    'crtcp',
    '--ssi',
    'crlam_external_dir',
    w.root,
    join(FIXTURES, 'ring.mjs'),
    w.ctl,
  ]);
  await job.lines(/ring running/, 2, 'the ring to run');
  const r = await lamcheckpoint(job.pid);
  expect(r.code).not.toBe(0);
  expect(r.stdout + r.stderr).toMatch(
    /timed out after 2 s waiting for the in-process checkpointer/,
  );
  writeFileSync(join(w.ctl, 'stop'), '');
  const end = await job.done;
  expect(end.code, job.out).toBe(0);
});
