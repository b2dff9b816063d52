import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '@ssi/cli/testing';
import { lamBin, wipeSession } from '@ssi/lam';
import { startTestbed, type Testbed, testbedAvailable } from '@ssi/testbed';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * crtcp across test hosts (one sshd per loopback address): a universe of three nodes booted with
 * lamboot, then `mpirun N --ssi rpi crtcp` of the drain job (one rank per node): messages in
 * flight between nodes are drained at the checkpoint, then the ranks restart (new connections
 * to every node's current address) and check every byte.
 */
const available = testbedAvailable();
const SUFFIX = `crtcp-tb-${process.pid}`;
const work = mkdtempSync(join(tmpdir(), 'ssi-crtcp-tb-'));
const program = join(import.meta.dirname, 'fixtures', 'drain-job.mjs');
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
  tb = await startTestbed({ hosts: 3 });
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

describe.skipIf(!available.ok)(
  `crtcp on three test hosts (${available.ok ? 'real sshd' : available.reason})`,
  () => {
    it.each(['restart', 'continue'])(
      'drains between nodes, then %s, every byte checked',
      async (mode) => {
        const r = await runCli(
          'mpirun',
          ['N', '--ssi', 'rpi', 'crtcp', '--ssi', 'rpi_verbose', '10', program, mode, '2'],
          env(),
          { cwd: work, timeoutMs: 180_000 },
        );
        const out = `${r.stdout}\n${r.stderr}`;
        expect(r.code, out).toBe(0);
        expect(out.match(/OK rank \d/g)).toHaveLength(3);
        expect(out.match(/DRAIN \{/g)).toHaveLength(3 * 2);
        if (mode === 'restart') expect(out).toMatch(/crtcp: rank \d reconnected to 2 peers/);
        // the ranks ran on the three hosts: each listened on its own node's address (at init
        // and, after each restart, again for the new connections)
        for (const h of tb.hosts) {
          const at = new RegExp(`listening on ${h.address.replaceAll('.', '\\.')}:`, 'g');
          expect(out.match(at)?.length, `listens on ${h.address}`).toBe(mode === 'restart' ? 3 : 1);
        }
      },
    );
  },
);
