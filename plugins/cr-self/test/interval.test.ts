import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CheckpointStore } from '@ssi/mpi';
import { afterEach, expect, it } from 'vitest';
import { checkpointRoot, FIXTURES, jobDir, type RunningJob, startJob } from './cr-harness';

// The issue: checkpoints "every N seconds by a parameter" and "keep the last K series". The job
// exchanges messages the whole time; series appear while it runs, the keep rule leaves K.
let job: RunningJob | undefined;
let cleanup: (() => void) | undefined;
afterEach(() => {
  job?.kill();
  cleanup?.();
  job = undefined;
  cleanup = undefined;
});

const completeSeries = async (dir: string) =>
  (await await CheckpointStore.open(dir, { create: false }).then((s) => s.examine()))
    .filter((s) => s.complete)
    .map((s) => s.series);

it('crlam_self_interval 1 takes series while the job runs; crlam_self_keep 2 leaves the newest two', async () => {
  const ck = checkpointRoot();
  cleanup = ck.cleanup;
  const go = join(ck.root, 'go');
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
    '--ssi',
    'crlam_self_interval',
    '1',
    '--ssi',
    'crlam_self_keep',
    '2',
    join(FIXTURES, 'hold.mjs'),
    go,
    'busy',
  ]);
  await job.lines(/mpirun: checkpoint series 3 \(/, 1, 'the third periodic checkpoint', 30_000);
  // While the job still runs: series 1 was removed by the keep rule when series 3 was complete.
  expect(job.child.exitCode, job.out).toBeNull();
  const running = await completeSeries(jobDir(root));
  expect(running).not.toContain(1);
  expect(running).toContain(3);
  expect(running.length).toBeLessThanOrEqual(2);

  writeFileSync(go, '');
  const ended = await job.done;
  expect(ended.code, job.out).toBe(0);
  expect(job.out.match(/hold OK/g)?.length, job.out).toBe(2);
  const taken = [...job.out.matchAll(/mpirun: checkpoint series (\d+) \(/g)].map((m) =>
    Number(m[1]),
  );
  const newest = Math.max(...taken);
  expect(taken).toEqual(Array.from({ length: newest }, (_, i) => i + 1));
  expect((await completeSeries(jobDir(root))).sort((a, b) => a - b)).toEqual([newest - 1, newest]);
});
