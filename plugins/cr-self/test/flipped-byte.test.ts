import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '@ssi/cli/testing';
import { afterEach, expect, it } from 'vitest';
import {
  checkpointRoot,
  FIXTURES,
  jobDir,
  lamcheckpoint,
  lamrestart,
  type RunningJob,
  startJob,
} from './cr-harness';

// The issue: "a series with a flipped byte in one rank's file is rejected with a message naming
// the file"; with the local plan (no redundancy) lamrestart refuses and names the older complete
// series, which `mpirun --cr-restart` then uses; with none left it says so.
let job: RunningJob | undefined;
let cleanup: (() => void) | undefined;
afterEach(() => {
  job?.kill();
  cleanup?.();
  job = undefined;
  cleanup = undefined;
});

function flipByte(file: string): void {
  const bytes = readFileSync(file);
  const at = Math.floor(bytes.length / 2);
  bytes[at] = bytes[at]! ^ 0x01;
  writeFileSync(file, bytes);
}

it('a flipped byte in a rank file: lamrestart names the file and the older series that would do, and says when none would', async () => {
  const ck = checkpointRoot();
  cleanup = ck.cleanup;
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
    ck.root,
    join(FIXTURES, 'two-checkpoints.mjs'),
  ]);
  for (const n of [1, 2]) {
    await job.lines(new RegExp(`waiting for checkpoint ${n}`), 2, `both ranks at stage ${n}`);
    const r = await lamcheckpoint(job.pid);
    expect(r.stdout + r.stderr, `lamcheckpoint ${n}`).toMatch(
      new RegExp(`checkpoint series ${n} of job`),
    );
    expect(r.code).toBe(0);
  }
  const ended = await job.done;
  expect(ended.code, job.out).toBe(0);
  expect(job.out.match(/two-checkpoints OK \(continued\)/g)?.length, job.out).toBe(2);

  const dir = jobDir(ck.root);
  const damaged = join(dir, 'series-2', 'rank-1.ckpt');
  flipByte(damaged);
  // A committed series with a damaged file (the local plan has no redundancy) is refused, not
  // silently passed over: the message names the file and the older series that would do.
  const refused = await lamrestart(dir);
  expect(refused.code, refused.stdout + refused.stderr).toBe(1);
  expect(refused.stderr).toContain(
    `series 2 cannot be restored: rank 1's file ${damaged} is lost (checksum mismatch (file damaged or truncated))`,
  );
  expect(refused.stderr).toContain(
    `The older series 1 is complete and would do: mpirun --cr-restart ${join(dir, 'series-1')}`,
  );
  expect(refused.stdout).not.toMatch(/two-checkpoints OK/);
  const older = await runCli('mpirun', ['--cr-restart', join(dir, 'series-1')], process.env, {
    timeoutMs: 120_000,
  });
  const text = older.stdout + older.stderr;
  expect(older.code, text).toBe(0);
  expect(text.match(/two-checkpoints OK \(restarted from series 1\)/g)?.length, text).toBe(2);

  flipByte(join(dir, 'series-1', 'rank-0.ckpt'));
  const none = await lamrestart(dir);
  expect(none.code, none.stdout + none.stderr).not.toBe(0);
  expect(none.stderr).toMatch(/series 2 cannot be restored: .*rank-1\.ckpt/);
  expect(none.stderr).toContain('No older series would do: none is complete.');
  expect(none.stdout).not.toMatch(/two-checkpoints OK/);
});
