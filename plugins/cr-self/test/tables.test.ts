import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkpointRoot,
  FIXTURES,
  jobDir,
  lamcheckpoint,
  lamrestart,
  type RunningJob,
  startJob,
} from './cr-harness';

// Ch. 7.4.1: for each function of Tables 7.1 and 7.2, even ranks sleep while odd ranks are
// blocked in it; a checkpoint is taken; the job continues and checks every byte; then it is
// restarted from that checkpoint and again runs to the end, checking every byte.
const TABLE_7_2 = [
  'irecv',
  'irsend',
  'isend',
  'issend',
  'recv',
  'rsend',
  'send',
  'sendrecv',
  'ssend',
  'wait',
];
const TABLE_7_1 = ['alltoall', 'barrier', 'bcast', 'gather', 'gatherv', 'scatter', 'reduce'];

let job: RunningJob | undefined;
let cleanup: (() => void) | undefined;
afterEach(() => {
  job?.kill();
  cleanup?.();
  job = undefined;
  cleanup = undefined;
});

async function checkpointContinueRestart(fn: string, np: number): Promise<void> {
  const ck = checkpointRoot();
  cleanup = ck.cleanup;
  const program = join(FIXTURES, 'cr-function.mjs');
  job = startJob([
    '-np',
    String(np),
    '--ssi',
    'cr',
    'self',
    '--ssi',
    'rpi',
    'crtcp',
    '--ssi',
    'crlam_self_dir',
    ck.root,
    program,
    fn,
  ]);
  const odd = Math.floor(np / 2);
  await job.lines(/blocking in /, odd, `${odd} odd rank(s) blocking in ${fn}`);
  await job.lines(/sleeping/, np - odd, `${np - odd} even rank(s) sleeping`);
  await new Promise((r) => setTimeout(r, 300)); // let the odd ranks block inside the call
  const ckpt = await lamcheckpoint(job.pid);
  expect(ckpt.stderr + ckpt.stdout, 'lamcheckpoint').toMatch(/checkpoint series 1 of job/);
  expect(ckpt.code).toBe(0);
  const first = await job.done;
  expect(first.code, job.out).toBe(0);
  expect(job.out.match(new RegExp(`${fn} OK`, 'g'))?.length, job.out).toBe(np);

  const restarted = await lamrestart(jobDir(ck.root));
  const text = restarted.stdout + restarted.stderr;
  expect(restarted.code, text).toBe(0);
  expect(text.match(new RegExp(`${fn} OK \\(restarted\\)`, 'g'))?.length, text).toBe(np);
}

describe('checkpoint, continue and restart in every function of Table 7.2 (4 ranks)', () => {
  for (const fn of TABLE_7_2) it(fn, () => checkpointContinueRestart(fn, 4));
});

describe('checkpoint, continue and restart in every function of Table 7.1 (4 ranks)', () => {
  for (const fn of TABLE_7_1) it(fn, () => checkpointContinueRestart(fn, 4));
});

describe('other job sizes', () => {
  for (const [fn, np] of [
    ['send', 2],
    ['recv', 3],
    ['alltoall', 3],
    ['bcast', 2],
    ['sendrecv', 8],
    ['gather', 8],
  ] as const) {
    it(`${fn} on ${np} ranks`, () => checkpointContinueRestart(fn, np));
  }
});
