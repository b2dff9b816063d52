import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { lamBin, SESSION_FILES, sessionDirFor, wipeSession } from '@ssi/lam';
import { conformanceProgram } from '@ssi/mpi/testing';
import { startTestbed, type Testbed, testbedAvailable } from '@ssi/testbed';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * mpirun across real test hosts: a universe of three nodes booted over ssh (one sshd per
 * loopback address), ranks placed on every node, point-to-point across the node addresses.
 */
const available = testbedAvailable();
const bin = (name: string) => resolve(import.meta.dirname, '../dist/bin', `${name}.js`);
const job = resolve(import.meta.dirname, 'fixtures/mpi-job.mjs');
const SUFFIX = `mpirun-tb-${process.pid}`;
const work = mkdtempSync(join(tmpdir(), 'ssi-mpirun-tb-'));
let tb: Testbed;
let schema: string;

function env(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/',
    LAM_MPI_SESSION_HOST: tb.hosts[0]!.address,
    LAM_MPI_SESSION_SUFFIX: SUFFIX,
    LAM_MPI_SSI_boot_rsh_agent: tb.sshCommand.join(' '),
    LAM_MPI_SSI_boot_base_timeout: '20',
  };
}

function run(cmd: string, args: string[]) {
  const r = spawnSync(process.execPath, [bin(cmd), ...args], {
    cwd: work,
    env: env(),
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(async () => {
  if (!available.ok) return;
  const prefix = join(work, 'prefix');
  mkdirSync(join(prefix, 'bin'), { recursive: true });
  symlinkSync(lamBin('hboot'), join(prefix, 'bin', 'hboot'));
  tb = await startTestbed({ hosts: 3 });
  // cpu=2 on the first host, 1 on the others: C gives 4 slots, N gives 3
  schema = tb.writeBootSchema(join(work, 'hosts'), {
    perHost: (h) => `prefix=${prefix}${h === tb.hosts[0] ? ' cpu=2' : ''}`,
  });
  const boot = run('lamboot', [schema]);
  if (boot.code !== 0) throw new Error(`lamboot failed:\n${boot.stderr}`);
});

afterAll(async () => {
  if (tb) {
    run('lamhalt', []);
    for (const h of tb.hosts) await wipeSession(h.address, SUFFIX, 2000);
    await tb.stop();
  }
  rmSync(work, { recursive: true, force: true });
});

describe.skipIf(!available.ok)(
  `mpirun on three test hosts (${available.ok ? 'real sshd' : available.reason})`,
  () => {
    it('C puts ranks on every CPU of every node, N one per node, nX-Y where asked', () => {
      const c = run('mpirun', ['C', job, 'ring']);
      expect(c.code, c.stderr).toBe(0);
      expect(c.stdout).toContain('[0] ring: 0 1 2 3');
      const nodes = (out: string) =>
        [...out.matchAll(/^\[(\d+)\] rank \d+ of \d+ on node (\d+)/gm)]
          .sort((a, b) => Number(a[1]) - Number(b[1]))
          .map((m) => Number(m[2]));
      expect(nodes(c.stdout)).toEqual([0, 0, 1, 2]);
      const n = run('mpirun', ['N', job, 'ring']);
      expect(nodes(n.stdout)).toEqual([0, 1, 2]);
      const some = run('mpirun', ['-np', '4', 'n1-2', job, 'ring']);
      expect(nodes(some.stdout)).toEqual([1, 2, 1, 2]);
    });

    it('passes the conformance suite with 5 ranks spread over the three nodes', () => {
      const r = run('mpirun', [
        '-np',
        '5',
        '--ssi',
        'rpi',
        'tcp',
        conformanceProgram,
        'modes',
        'objects',
        'unexpected',
        'overtaking',
        'wildcards',
        'probe',
        'sizes',
        'stress',
      ]);
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(r.stdout).toContain('case stress ok');
    });

    it('a failing rank on a remote node ends the job there too and names the node', () => {
      const r = run('mpirun', ['N', job, 'fail']);
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/rank 1 \(pid \d+ on n1\) exited with code 3/);
      const leftovers = tb.hosts.flatMap((h) => {
        const dir = join(sessionDirFor(h.address, SUFFIX), SESSION_FILES.procs);
        return existsSync(dir) ? readdirSync(dir) : [];
      });
      expect(leftovers).toEqual([]);
    });
  },
);
