import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '@ssi/cli/testing';
import { lamBin, wipeSession } from '@ssi/lam';
import { startTestbed, type Testbed, testbedAvailable } from '@ssi/testbed';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, jobDir, lamcheckpoint, type RunningJob, startJob } from './cr-harness';

// The issue: "restart on other test hosts" / "the nodes may differ from the original job's".
// A universe of four test hosts (one sshd per loopback address) booted with lamboot; the job
// runs on nodes n0 and n1, is checkpointed and ends; lamrestart puts it on n2 and n3, and the
// ranks report the other hosts while checking every byte.
const available = testbedAvailable();
const SUFFIX = `cr-hosts-${process.pid}`;
const work = mkdtempSync(join(tmpdir(), 'ssi-cr-hosts-'));
const ckpt = join(work, 'ckpt');
let tb: Testbed;
let job: RunningJob | undefined;

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

afterEach(() => {
  job?.kill();
  job = undefined;
});

afterAll(async () => {
  if (tb) {
    await runCli('lamhalt', [], env(), { cwd: work, timeoutMs: 60_000 }).catch(() => {});
    for (const h of tb.hosts) await wipeSession(h.address, SUFFIX, 2000);
    await tb.stop();
  }
  rmSync(work, { recursive: true, force: true });
});

describe.skipIf(!available.ok)(
  `restart on other test hosts (${available.ok ? 'real sshd' : available.reason})`,
  () => {
    it('checkpointed on n0,n1, restarted on n2,n3: other processor names, every byte checked', async () => {
      const [a, b, c, d] = tb.hosts.map((h) => h.address);
      job = startJob(
        [
          'n0-1',
          '--ssi',
          'cr',
          'self',
          '--ssi',
          'rpi',
          'crtcp',
          '--ssi',
          'crlam_self_dir',
          ckpt,
          join(FIXTURES, 'migrate.mjs'),
        ],
        env(),
      );
      await job.lines(/waiting for the checkpoint/, 2, 'both ranks to wait for the checkpoint');
      expect(job.out).toContain(`rank 0: on ${a},`);
      expect(job.out).toContain(`rank 1: on ${b},`);
      const r = await lamcheckpoint(job.pid);
      expect(r.stdout + r.stderr).toMatch(/checkpoint series 1 of job/);
      expect(r.code).toBe(0);
      const first = await job.done;
      expect(first.code, job.out).toBe(0);
      expect(job.out).toContain(`rank 0: migrate OK (continued) now on ${a}, first on ${a}`);

      const restarted = await runCli('lamrestart', [jobDir(ckpt), 'n2-3'], env(), {
        cwd: work,
        timeoutMs: 120_000,
      });
      const text = restarted.stdout + restarted.stderr;
      expect(restarted.code, text).toBe(0);
      expect(text).toContain(`rank 0: migrate OK (restarted) now on ${c}, first on ${a}`);
      expect(text).toContain(`rank 1: migrate OK (restarted) now on ${d}, first on ${b}`);
    });
  },
);
