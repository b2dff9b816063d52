import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { bootTestbedUniverse, type TestbedUniverse } from '@ssi/cli/testing';
import { testbedAvailable } from '@ssi/testbed';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, jobDir } from './cr-harness';

// The issue (#17, storage plans) across test hosts: a job of 4 ranks, one per test host (one
// sshd per loopback address), checkpointed twice with `duplicate` or `parity` (sets of 2 on
// different nodes: {0,1} and {2,3}); then everything one host wrote to the checkpoint directory
// is deleted (the directory is one shared path here, as mpirun's manifest check requires, so a
// host's loss is its rank's files of every series) and lamrestart rebuilds them, saying so, and
// the restarted job computes the undisturbed job's result.
const available = testbedAvailable();
/** The universe booted over the test hosts (in beforeAll, when they can be had). */
let u: TestbedUniverse;

beforeAll(async () => {
  if (available.ok) u = await bootTestbedUniverse({ hosts: 4, name: 'cr-plans' });
});

afterAll(() => u?.halt());

/** Runs plans.mjs on n0-3 with `plan`; returns the job's checkpoint dir and its result. */
async function checkpointed(name: string, plan: string[]) {
  const primary = join(u.work, name, 'ckpt');
  const args = ['n0-3', '--ssi', 'cr', 'self', '--ssi', 'rpi', 'crtcp'];
  args.push('--ssi', 'crlam_self_dir', primary);
  args.push('--ssi', 'crlam_self_second_dir', join(u.work, name, 'fileserver'));
  const r = await u.run('mpirun', [...args, ...plan, join(FIXTURES, 'plans.mjs')]);
  const out = r.stdout + r.stderr;
  expect(r.code, out).toBe(0);
  expect(out.match(/plans result \d+ \(continued\)/g)?.length, out).toBe(4);
  return { dir: jobDir(primary), result: /plans result (\d+)/.exec(out)![1]! };
}

/** Deletes every file host `n` (rank n: one rank per host) wrote to the checkpoint directory. */
function loseHost(dir: string, n: number): string[] {
  const files = [1, 2].map((s) => join(dir, `series-${s}`, `rank-${n}.ckpt`));
  for (const f of files) unlinkSync(f);
  return files;
}

async function restartedResult(dir: string): Promise<string> {
  const r = await u.run('lamrestart', [dir, 'n0-3']);
  const text = r.stdout + r.stderr;
  expect(r.code, text).toBe(0);
  return text;
}

describe.skipIf(!available.ok)(
  `storage plans across test hosts (${available.ok ? 'real sshd' : available.reason})`,
  () => {
    it('duplicate: host n2 lost its checkpoint files; rebuilt from the file server, same result', async () => {
      const job = await checkpointed('dup', ['--ssi', 'crlam_self_plan', 'duplicate']);
      const [, newest] = loseHost(job.dir, 2);
      const text = await restartedResult(job.dir);
      expect(text).toMatch(
        new RegExp(
          `lamrestart: series 2: rebuilt rank 2's file ${newest} \\(missing\\) from the duplicate .*/fileserver/.*/series-2/rank-2\\.ckpt\\n`,
        ),
      );
      expect(text.split(`plans result ${job.result} (restarted from series 2)`).length - 1).toBe(4);
    });

    it('parity: host n1 lost its checkpoint files; rebuilt from its set on other hosts, same result', async () => {
      const job = await checkpointed('par', [
        '--ssi',
        'crlam_self_plan',
        'parity',
        '--ssi',
        'crlam_self_parity_set',
        '2',
      ]);
      const [, newest] = loseHost(job.dir, 1);
      const text = await restartedResult(job.dir);
      expect(text).toMatch(
        new RegExp(
          `lamrestart: series 2: rebuilt rank 1's file ${newest} \\(missing\\) from parity set 0 \\(.*/series-2/parity-0\\.xor XOR the files of rank\\(s\\) 0\\)\\n`,
        ),
      );
      expect(text.split(`plans result ${job.result} (restarted from series 2)`).length - 1).toBe(4);
    });
  },
);
