import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { lamBin, SESSION_FILES, sessionDirFor, wipeSession } from '@ssi/lam';
import {
  COLLECTIVE_CASES,
  collectivesProgram,
  conformanceProgram,
  jobsProgram,
} from '@ssi/mpi/testing';
import { startTestbed, type Testbed, testbedAvailable } from '@ssi/testbed';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The commands on real test hosts (Ch. 4.3.1): a universe of four nodes booted with lamboot over
 * ssh (one sshd per loopback address); lamnodes, tping, lamexec, lamshrink, lamgrow, then mpirun
 * placing ranks on every node with point-to-point across the node addresses; lamhalt last.
 * The tests run in order on one universe.
 */
const available = testbedAvailable();
const bin = (name: string) => resolve(import.meta.dirname, '../dist/bin', `${name}.js`);
const job = jobsProgram;
const SUFFIX = `mpirun-tb-${process.pid}`;
// Made in a hook, not when the file loads: a run filtered with -t that skips every test here
// runs no hook, and would leave the directory behind.
let work = '';
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'ssi-mpirun-tb-'));
});
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

function run(cmd: string, args: string[], extraEnv: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [bin(cmd), ...args], {
    cwd: work,
    env: { ...env(), ...extraEnv },
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const ourSuffix = new RegExp(`${SUFFIX}(?![0-9])`);

/** Processes of this universe still running (lamds and what they started), with their command lines. */
function universeProcesses(): string[] {
  return readdirSync('/proc')
    .filter((pid) => /^\d+$/.test(pid) && Number(pid) !== process.pid)
    .flatMap((pid) => {
      try {
        // SUFFIX followed by a digit is another run's (mpirun-tb-12 is not mpirun-tb-123).
        if (!ourSuffix.test(readFileSync(`/proc/${pid}/environ`, 'utf8'))) return [];
        return [`${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')}`];
      } catch {
        return [];
      }
    });
}

beforeAll(async () => {
  if (!available.ok) return;
  const prefix = join(work, 'prefix');
  mkdirSync(join(prefix, 'bin'), { recursive: true });
  symlinkSync(lamBin('hboot'), join(prefix, 'bin', 'hboot'));
  tb = await startTestbed({ hosts: 4 });
  // cpu=2 on the first host, 1 on the others: C gives 5 slots, N gives 4
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
  `the commands on four test hosts (${available.ok ? 'real sshd' : available.reason})`,
  () => {
    it('lamnodes from every node shows all four', () => {
      for (const h of tb.hosts) {
        const r = run('lamnodes', [], { LAM_MPI_SESSION_HOST: h.address });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout.trim().split('\n')).toHaveLength(4);
        for (const other of tb.hosts) expect(r.stdout).toContain(other.address);
        expect(r.stdout).toMatch(
          new RegExp(`${h.address.replaceAll('.', '\\.')}:\\d+:.*this_node`),
        );
      }
    });

    it('tping reaches every lamd; an unknown node is named', () => {
      const r = run('tping', ['-c', '2', 'N']);
      expect(r.code, r.stderr).toBe(0);
      for (const id of [0, 1, 2, 3]) expect(r.stdout).toMatch(new RegExp(`n${id}\\b`));
      const bad = run('tping', ['n9']);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain('node n9 is not in the universe (it has n0, n1, n2, n3)');
    });

    it('lamexec N runs a command on each node and forwards its output', () => {
      const r = run('lamexec', ['N', 'sh', '-c', 'echo "on $LAM_MPI_SESSION_DIR"']);
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stdout.trim().split('\n').sort();
      expect(lines).toHaveLength(4);
      for (const h of tb.hosts) expect(r.stdout).toContain(`@${h.address}-${SUFFIX}`);
    });

    it('a second lamboot over the running universe is refused', () => {
      const r = run('lamboot', [schema]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/already running|is running/);
    });

    it('lamshrink then lamgrow leave a working universe', () => {
      const last = tb.hosts[3]!;
      const shrink = run('lamshrink', ['n3']);
      expect(shrink.code, shrink.stderr).toBe(0);
      expect(run('lamnodes', []).stdout).not.toContain(last.address);
      const grow = run('lamgrow', [last.address, `prefix=${join(work, 'prefix')}`]);
      expect(grow.code, grow.stderr).toBe(0);
      const nodes = run('lamnodes', []).stdout;
      expect(nodes.trim().split('\n')).toHaveLength(4);
      expect(nodes).toContain(last.address);
      const ping = run('tping', ['N']);
      expect(ping.code, ping.stderr).toBe(0);
    });

    it('C puts ranks on every CPU of every node, N one per node, nX-Y where asked', () => {
      const c = run('mpirun', ['C', job, 'ring']);
      expect(c.code, c.stderr).toBe(0);
      expect(c.stdout).toContain('[0] ring: 0 1 2 3 4');
      const nodes = (out: string) =>
        [...out.matchAll(/^\[(\d+)\] rank \d+ of \d+ on node (\d+)/gm)]
          .sort((a, b) => Number(a[1]) - Number(b[1]))
          .map((m) => Number(m[2]));
      expect(nodes(c.stdout).slice(0, 3)).toEqual([0, 0, 1]);
      expect(new Set(nodes(c.stdout))).toEqual(new Set([0, 1, 2, 3]));
      const n = run('mpirun', ['N', job, 'ring']);
      expect(nodes(n.stdout)).toHaveLength(4);
      const some = run('mpirun', ['-np', '4', 'n0-1', job, 'ring']);
      expect(nodes(some.stdout)).toEqual([0, 1, 0, 1]);
    });

    it("a start-up snapshot starts only mpirun's node's ranks of a private universe", () => {
      const probe = resolve(import.meta.dirname, 'fixtures/snapshot-probe.mjs');
      const args = ['N', probe]; // mpi_base_startup_snapshot 1 is the default
      const plain = 'snapshot mpi=false rpi=false execArgv=(none) child=ok sum=6';
      // In the booted universe: none (a lamd's environment, so its NODE_OPTIONS, may differ).
      const booted = run('mpirun', args);
      expect(booted.code, booted.stderr).toBe(0);
      for (const rank of [0, 1, 2, 3]) {
        expect(booted.stdout).toContain(`[${rank}] ${plain}`);
      }
      // A private universe over the four hosts (another session suffix, LAMBHOST): only n0's
      // ranks, where the file is (another node may not have it).
      const own = run('mpirun', args, { LAMBHOST: schema, LAM_MPI_SESSION_SUFFIX: `${SUFFIX}p` });
      expect(own.code, own.stderr).toBe(0);
      expect(own.stdout).toContain('[0] snapshot mpi=true rpi=true execArgv=(none) child=ok sum=6');
      for (const rank of [1, 2, 3]) {
        expect(own.stdout).toContain(`[${rank}] ${plain}`);
      }
    });

    it('passes the conformance suite with 5 ranks spread over the four nodes', () => {
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

    it('every collective with one rank per node (N) and uneven ranks per node (C: 2+1+1+1)', () => {
      for (const where of ['N', 'C']) {
        // bad-input runs on one node in the coll-lam-basic tests (it needs a short timeout).
        const cases = COLLECTIVE_CASES.filter((c) => c !== 'bad-input');
        const r = run('mpirun', [where, collectivesProgram, ...cases]);
        expect(r.code, `${where}:\n${r.stdout}\n${r.stderr}`).toBe(0);
        expect(r.stdout).toContain('case intercomm ok');
      }
    });

    it('a failing rank on a remote node ends the job there too and names the node', () => {
      const r = run('mpirun', ['-np', '3', 'n0-2', job, 'fail']);
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/rank 1 \(pid \d+ on n1\) exited with code 3/);
      const leftovers = tb.hosts.flatMap((h) => {
        const dir = join(sessionDirFor(h.address, SUFFIX), SESSION_FILES.procs);
        return existsSync(dir) ? readdirSync(dir) : [];
      });
      expect(leftovers).toEqual([]);
    });

    it('lamhalt leaves no lamd and no session directory on any node', async () => {
      const r = run('lamhalt', []);
      expect(r.code, r.stderr).toBe(0);
      for (const h of tb.hosts) expect(existsSync(sessionDirFor(h.address, SUFFIX))).toBe(false);
      // The remote lamds exit right after answering: give them a moment, then there must be none.
      const deadline = Date.now() + 10_000;
      while (universeProcesses().length > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(universeProcesses()).toEqual([]);
    });
  },
);
