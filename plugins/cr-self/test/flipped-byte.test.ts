import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
// the file"; the previous complete series is used, and with none left lamrestart fails clearly.
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

it('a flipped byte in a rank file: lamrestart names the file, skips that series, and fails clearly when none is left', async () => {
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
  flipByte(join(dir, 'series-2', 'rank-1.ckpt'));
  const restarted = await lamrestart(dir);
  const text = restarted.stdout + restarted.stderr;
  expect(text).toMatch(/lamrestart: skipping series 2: .*rank-1\.ckpt/);
  expect(text).toMatch(/from series 1 of/);
  expect(restarted.code, text).toBe(0);
  expect(text.match(/two-checkpoints OK \(restarted from series 1\)/g)?.length, text).toBe(2);

  flipByte(join(dir, 'series-1', 'rank-0.ckpt'));
  const none = await lamrestart(dir);
  expect(none.code, none.stdout + none.stderr).not.toBe(0);
  expect(none.stderr).toMatch(/no complete checkpoint series in .*series 2: .*rank-1\.ckpt/);
  expect(none.stderr).toMatch(/series 1: .*rank-0\.ckpt/);
  expect(none.stdout).not.toMatch(/two-checkpoints OK/);
});
