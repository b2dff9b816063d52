import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '@ssi/cli/testing';
import { lamBin, wipeSession } from '@ssi/lam';
import { startTestbed, type Testbed, testbedAvailable } from '@ssi/testbed';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A job whose communicators use smp stays checkpointable (`--ssi cr self --ssi rpi crtcp`): two
 * test hosts (one sshd per loopback address) with 2 CPUs each, `mpirun C` (2+2 ranks), a
 * checkpoint taken while three ranks are blocked in smp's collectives, then `lamrestart` from
 * the series: collectives checked before, after the checkpoint and after the restart.
 */
const available = testbedAvailable();
const SUFFIX = `smp-cr-${process.pid}`;
const work = mkdtempSync(join(tmpdir(), 'ssi-smp-cr-'));
const program = join(import.meta.dirname, 'fixtures', 'smp-checkpoint.mjs');
let tb: Testbed;

function env(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/',
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
  tb = await startTestbed({ hosts: 2 });
  const schema = tb.writeBootSchema(join(work, 'hosts'), {
    perHost: () => `cpu=2 prefix=${prefix}`,
  });
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

describe.skipIf(!available.ok)(
  `smp with cr self and crtcp on two test hosts (${available.ok ? 'real sshd' : available.reason})`,
  () => {
    it('checkpoints during smp collectives, continues, and restarts from the series', async () => {
      const root = join(work, 'checkpoints');
      mkdirSync(root);
      const ssi = ['--ssi', 'cr', 'self', '--ssi', 'rpi', 'crtcp', '--ssi', 'coll', 'smp'];
      const first = await runCli(
        'mpirun',
        ['C', ...ssi, '--ssi', 'coll_verbose', '10', '--ssi', 'crlam_self_dir', root, program],
        env(),
        { cwd: work, timeoutMs: 180_000 },
      );
      const out = `${first.stdout}\n${first.stderr}`;
      expect(first.code, out).toBe(0);
      expect(out.match(/OK rank \d\n/g), out).toHaveLength(4);
      expect(out).toMatch(/CHECKPOINT series 1/);
      expect(out, 'smp serves the world').toMatch(/COMM_WORLD: coll module smp/);

      const jobs = readdirSync(root);
      expect(jobs, 'one job directory').toHaveLength(1);
      const again = await runCli('lamrestart', [join(root, jobs[0]!)], env(), {
        cwd: work,
        timeoutMs: 180_000,
      });
      const text = `${again.stdout}\n${again.stderr}`;
      expect(again.code, text).toBe(0);
      expect(text.match(/OK rank \d \(restarted\)/g), text).toHaveLength(4);
    });
  },
);
