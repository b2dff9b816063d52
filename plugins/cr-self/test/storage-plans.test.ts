import { existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '@ssi/cli/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointRoot, FIXTURES, jobDir, lamrestart } from './cr-harness';

// The issue (#17, storage plans): delete or corrupt one rank's file and restart: with
// `duplicate` and with `parity` the job restarts with the right data and says what it rebuilt;
// with two lost files in one parity set, or with `local`, restart refuses with a message naming
// what is missing and which older series would do. Real jobs of 4 ranks on one node through the
// built mpirun and lamrestart; `plans.mjs` checks every byte of its state and computes a result
// over the whole job, which the restart must reproduce.
let cleanup: (() => void) | undefined;
afterEach(() => {
  cleanup?.();
  cleanup = undefined;
});

interface Checkpointed {
  /** the job's checkpoint directory (primary) */
  dir: string;
  /** the job's directory in the second location */
  second: string;
  /** the result the undisturbed job computed */
  result: string;
}

/** Runs plans.mjs on 4 ranks with `plan` (two series), returns where its checkpoints are. */
async function checkpointedJob(plan: string[]): Promise<Checkpointed> {
  const ck = checkpointRoot();
  cleanup = ck.cleanup;
  const primary = join(ck.root, 'ckpt');
  const fileServer = join(ck.root, 'fileserver');
  const args = ['-np', '4', '--ssi', 'cr', 'self', '--ssi', 'rpi', 'crtcp'];
  args.push('--ssi', 'crlam_self_dir', primary, '--ssi', 'crlam_self_second_dir', fileServer);
  const r = await runCli('mpirun', [...args, ...plan, join(FIXTURES, 'plans.mjs')], process.env, {
    timeoutMs: 120_000,
  });
  const out = r.stdout + r.stderr;
  expect(r.code, out).toBe(0);
  const results = out.match(/plans result (\d+) \(continued\)/g) ?? [];
  expect(results.length, out).toBe(4);
  const dir = jobDir(primary);
  const second = join(fileServer, dir.split('/').at(-1)!);
  return { dir, second, result: /plans result (\d+)/.exec(out)![1]! };
}

function flipByte(file: string): void {
  const bytes = readFileSync(file);
  bytes[bytes.length >> 1]! ^= 0x01;
  writeFileSync(file, bytes);
}

/** lamrestart; the restarted job must reproduce the result on every rank, from series 2. */
async function restartsWithResult(job: Checkpointed): Promise<string> {
  const r = await lamrestart(job.dir);
  const text = r.stdout + r.stderr;
  expect(r.code, text).toBe(0);
  const expected = `plans result ${job.result} (restarted from series 2)`;
  expect(text.split(expected).length - 1, text).toBe(4);
  return text;
}

describe('storage plans: restart after a lost or corrupt rank file (4 ranks, one node)', () => {
  it('duplicate: a deleted and a corrupt file are rebuilt from the file server; same result', async () => {
    const job = await checkpointedJob(['--ssi', 'crlam_self_plan', 'duplicate']);
    const f = (r: number) => join(job.dir, 'series-2', `rank-${r}.ckpt`);
    const copy = (r: number) => join(job.second, 'series-2', `rank-${r}.ckpt`);
    unlinkSync(f(1));
    flipByte(f(3));
    const text = await restartsWithResult(job);
    expect(text).toContain(
      `lamrestart: series 2: rebuilt rank 1's file ${f(1)} (missing) from the duplicate ${copy(1)}\n`,
    );
    expect(text).toContain(
      `lamrestart: series 2: rebuilt rank 3's file ${f(3)} (checksum mismatch (file damaged or truncated)) from the duplicate ${copy(3)}\n`,
    );
    expect(text.match(/rebuilt rank/g)?.length).toBe(2);
  });

  it('parity (sets of 2): one lost file in each set is rebuilt by XOR; same result', async () => {
    const job = await checkpointedJob([
      '--ssi',
      'crlam_self_plan',
      'parity',
      '--ssi',
      'crlam_self_parity_set',
      '2',
    ]);
    // one node: sets {0,1} and {2,3}; no copies of rank files in the second location
    const f = (r: number) => join(job.dir, 'series-2', `rank-${r}.ckpt`);
    const p = (k: number) => join(job.second, 'series-2', `parity-${k}.xor`);
    expect(() => readFileSync(join(job.second, 'series-2', 'rank-0.ckpt'))).toThrow(/ENOENT/);
    unlinkSync(f(0));
    flipByte(f(3));
    const text = await restartsWithResult(job);
    expect(text).toContain(
      `lamrestart: series 2: rebuilt rank 0's file ${f(0)} (missing) from parity set 0 (${p(0)} XOR the files of rank(s) 1)\n`,
    );
    expect(text).toContain(
      `lamrestart: series 2: rebuilt rank 3's file ${f(3)} (checksum mismatch (file damaged or truncated)) from parity set 1 (${p(1)} XOR the files of rank(s) 2)\n`,
    );
  });

  it('parity: two lost files in one set are refused, naming them and the older series', async () => {
    const job = await checkpointedJob([
      '--ssi',
      'crlam_self_plan',
      'parity',
      '--ssi',
      'crlam_self_parity_set',
      '2',
    ]);
    const f = (r: number) => join(job.dir, 'series-2', `rank-${r}.ckpt`);
    unlinkSync(f(2));
    flipByte(f(3));
    const r = await lamrestart(job.dir);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const lost = 'one parity file rebuilds one lost file per set';
    expect(r.stderr).toBe(
      `lamrestart: series 2 cannot be restored: rank 2's file ${f(2)} is lost (missing), and rank(s) 3 of its parity set (ranks 2, 3) are lost too: ${lost}; ` +
        `rank 3's file ${f(3)} is lost (checksum mismatch (file damaged or truncated)), and rank(s) 2 of its parity set (ranks 2, 3) are lost too: ${lost}. ` +
        `The older series 1 is complete and would do: mpirun --cr-restart ${join(job.dir, 'series-1')}\n`,
    );
    expect(r.stdout).not.toMatch(/plans result/);
  });

  it('local: a lost file is refused, naming it and the older series', async () => {
    const job = await checkpointedJob([]);
    const f = join(job.dir, 'series-2', 'rank-2.ckpt');
    unlinkSync(f);
    const r = await lamrestart(job.dir);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stderr).toBe(
      `lamrestart: series 2 cannot be restored: rank 2's file ${f} is lost (missing), and the series was taken with the local plan (no duplicate, no parity). ` +
        `The older series 1 is complete and would do: mpirun --cr-restart ${join(job.dir, 'series-1')}\n`,
    );
    expect(r.stdout).not.toMatch(/plans result/);
    // ... and the series named there does restart, with the result of the undisturbed job
    const older = await runCli('mpirun', ['--cr-restart', join(job.dir, 'series-1')], process.env, {
      timeoutMs: 120_000,
    });
    const text = older.stdout + older.stderr;
    expect(older.code, text).toBe(0);
    expect(text.split(`plans result ${job.result} (restarted from series 1)`).length - 1).toBe(4);
  });
});

describe('storage plans: a series whose redundancy does not arrive is not complete', () => {
  it('duplicate: the copies cannot be written (second dir is a file): the checkpoint fails naming them, nothing hangs', async () => {
    const ck = checkpointRoot();
    cleanup = ck.cleanup;
    const notADir = join(ck.root, 'fileserver');
    writeFileSync(notADir, 'a file where the file server directory should be');
    const r = await runCli(
      'mpirun',
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
        'crlam_self_plan',
        'duplicate',
        '--ssi',
        'crlam_self_second_dir',
        notADir,
        '--ssi',
        'crlam_self_copy_timeout',
        '2',
        join(FIXTURES, 'plans.mjs'),
      ],
      process.env,
      { timeoutMs: 90_000 },
    );
    const out = r.stdout + r.stderr;
    expect(r.code, out).not.toBe(0);
    expect(out).toContain(
      'checkpoint 1: series 1 is incomplete and will not be used: the copies of rank(s) 0, 1 did not reach',
    );
    expect(out).toContain('within 2000 ms');
    expect(existsSync(join(jobDir(join(ck.root, 'ckpt')), 'series-1', 'MANIFEST.json'))).toBe(
      false,
    );
  });
});

describe('storage plans: bad parameter values are refused before the job starts', () => {
  const cases: [string, string[], string][] = [
    [
      'an unknown plan',
      ['--ssi', 'crlam_self_plan', 'raid5'],
      'crlam_self_plan "raid5" is not a storage plan (expected one of local, duplicate, parity)',
    ],
    [
      'duplicate without a second location',
      ['--ssi', 'crlam_self_plan', 'duplicate'],
      'crlam_self_plan duplicate needs crlam_self_second_dir: the directory standing for the file server',
    ],
    [
      'a parity set of 1',
      ['--ssi', 'crlam_self_plan', 'parity', '--ssi', 'crlam_self_parity_set', '1'],
      'crlam_self_parity_set 1 is not a parity set size (expected an integer ≥ 2',
    ],
  ];
  for (const [what, settings, message] of cases) {
    it(what, async () => {
      const ck = checkpointRoot();
      cleanup = ck.cleanup;
      const second = settings.includes('duplicate')
        ? []
        : ['--ssi', 'crlam_self_second_dir', join(ck.root, 'fs')];
      const r = await runCli(
        'mpirun',
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
          ...(what === 'an unknown plan' ? [] : second),
          ...settings,
          join(FIXTURES, 'plans.mjs'),
        ],
        process.env,
        { timeoutMs: 60_000 },
      );
      expect(r.code, r.stdout + r.stderr).not.toBe(0);
      expect(r.stderr).toContain(message);
      expect(r.stdout).not.toMatch(/plans result|checkpoint series/);
      expect(existsSync(join(ck.root, 'ckpt'))).toBe(false); // nothing written
    });
  }
});
