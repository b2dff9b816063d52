import { mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '@ssi/cli/testing';
import { lamBin, wipeSession } from '@ssi/lam';
import { startTestbed, type Testbed, testbedAvailable } from '@ssi/testbed';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, jobDir } from './cr-harness';

// The issue (#17, storage plans) across test hosts: a job of 4 ranks, one per test host (one
// sshd per loopback address), checkpointed twice with `duplicate` or `parity` (sets of 2 on
// different nodes: {0,1} and {2,3}); then everything one host wrote to the checkpoint directory
// is deleted (the directory is one shared path here, as mpirun's manifest check requires, so a
// host's loss is its rank's files of every series) and lamrestart rebuilds them, saying so, and
// the restarted job computes the undisturbed job's result.
const available = testbedAvailable();
const SUFFIX = `cr-plans-${process.pid}`;
const work = mkdtempSync(join(tmpdir(), 'ssi-cr-plans-'));
let tb: Testbed;

function env(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/',
    TMPDIR: process.env.TMPDIR ?? tmpdir(),
    LAM_MPI_SESSION_HOST: tb.hosts[0]!.address,
    LAM_MPI_SESSION_SUFFIX: SUFFIX,
    LAM_MPI_SSI_boot_rsh_agent: tb.sshCommand.join(' '),
    LAM_MPI_SSI_boot_base_timeout: '20',
  };
}

beforeAll(async () => {
  if (!available.ok) return;
  const prefix = join(work, 'prefix');
  mkdirSync(join(prefix, 'bin'), { recursive: true });
  symlinkSync(lamBin('hboot'), join(prefix, 'bin', 'hboot'));
  tb = await startTestbed({ hosts: 4 });
  const schema = tb.writeBootSchema(join(work, 'hosts'), { perHost: () => `prefix=${prefix}` });
  const boot = await runCli('lamboot', [schema], env(), { cwd: work, timeoutMs: 120_000 });
  if (boot.code !== 0) throw new Error(`lamboot failed:\n${boot.stdout}\n${boot.stderr}`);
});

afterAll(async () => {
  if (tb) {
    await runCli('lamhalt', [], env(), { cwd: work, timeoutMs: 60_000 }).catch(() => {});
    for (const h of tb.hosts) await wipeSession(h.address, SUFFIX, 2000);
    await tb.stop();
  }
  rmSync(work, { recursive: true, force: true });
});

/** Runs plans.mjs on n0-3 with `plan`; returns the job's checkpoint dir and its result. */
async function checkpointed(name: string, plan: string[]) {
  const primary = join(work, name, 'ckpt');
  const args = ['n0-3', '--ssi', 'cr', 'self', '--ssi', 'rpi', 'crtcp'];
  args.push('--ssi', 'crlam_self_dir', primary);
  args.push('--ssi', 'crlam_self_second_dir', join(work, name, 'fileserver'));
  const r = await runCli('mpirun', [...args, ...plan, join(FIXTURES, 'plans.mjs')], env(), {
    cwd: work,
    timeoutMs: 120_000,
  });
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
  const r = await runCli('lamrestart', [dir, 'n0-3'], env(), { cwd: work, timeoutMs: 120_000 });
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
