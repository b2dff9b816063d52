import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { isProcessAlive, sessionUser } from '@ssi/lam';
import { conformanceProgram, jobsProgram } from '@ssi/mpi/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startCli, waitChild, waitFor } from '../src/testing';

/**
 * mpirun for real: every test starts the built command, which boots a private one-node universe
 * (no universe runs here) or uses the one the test booted, starts real rank processes through
 * the lamd, and must leave neither processes nor session directories behind.
 */
const fixtures = resolve(import.meta.dirname, 'fixtures');
const job = jobsProgram;
// Made in a hook, not when the file loads: a run filtered with -t that skips every test here
// runs no hook, and would leave the directory behind.
let work = '';
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'ssi-mpirun-test-'));
});
const SUFFIX = `mpirun-test-${process.pid}`;
const live = new Set<ChildProcess>();
/** Every command this file started: an mpirun's private universe is named after its pid. */
const startedPids = new Set<number>();

/** Runs a built command with SUFFIX's universe, in the fixtures directory; fails after `timeoutMs`. */
function run(cmd: string, args: string[], env: Record<string, string> = {}, timeoutMs = 90_000) {
  const child = start(cmd, args, env);
  return waitChild(child, `${cmd} ${args.join(' ')}`, timeoutMs).finally(() => live.delete(child));
}

function start(cmd: string, args: string[], env: Record<string, string> = {}): ChildProcess {
  const child = startCli(
    cmd,
    args,
    { ...process.env, LAM_MPI_SESSION_SUFFIX: SUFFIX, ...env },
    {
      cwd: fixtures,
    },
  );
  live.add(child);
  if (child.pid !== undefined) startedPids.add(child.pid);
  return child;
}

const mpirun = (args: string[], env: Record<string, string> = {}) => run('mpirun', args, env);

/**
 * Is `dir` (a session directory's name) of a universe these tests started: the booted one
 * (SUFFIX) or the private one of an mpirun this file started (`-mpirun-<its pid>`)? Other
 * people's jobs on the machine have other suffixes and are none of our business.
 */
function isOurs(dir: string): boolean {
  if (!dir.startsWith(`ssi-${sessionUser()}@`)) return false;
  if (dir.endsWith(`-${SUFFIX}`)) return true;
  return [...startedPids].some((pid) => dir.endsWith(`-mpirun-${pid}`));
}

/** Session directories of the universes these tests boot (the private ones of mpirun too). */
function sessionDirs(): string[] {
  return readdirSync(tmpdir()).filter(isOurs);
}

/** Processes started by one of our universes' lamds (ranks that outlived their job). */
function strayRanks(): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const dir = readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .find((e) => e.startsWith('LAM_MPI_SESSION_DIR='));
      if (!dir || !isOurs(basename(dir.slice('LAM_MPI_SESSION_DIR='.length)))) continue;
      if (/\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) continue;
      out.push(`${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')}`);
    } catch {}
  }
  return out;
}

afterEach(async () => {
  for (const c of live) c.kill('SIGKILL');
  await waitFor('no rank left running', () => strayRanks().length === 0, 10_000).catch((err) => {
    for (const line of strayRanks()) process.kill(Number(line.split(':')[0]), 'SIGKILL');
    throw err;
  });
});

afterAll(async () => {
  await run('lamhalt', []).catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

describe('mpirun on the embedded default (no universe running)', () => {
  it('boots a private universe, runs the job with rank-prefixed output, halts it afterwards', async () => {
    const r = await mpirun(['-np', '4', job, 'ring']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('[0] ring: 0 1 2 3');
    for (let k = 0; k < 4; k++)
      expect(r.stdout).toMatch(new RegExp(`^\\[${k}\\] rank ${k} of 4 on node 0`, 'm'));
    expect(sessionDirs()).toEqual([]);
  });

  it('runs a TypeScript entry point directly', async () => {
    const r = await mpirun(['-np', '2', 'mpi-hello.ts']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('[0] typescript rank 0 of 2 heard from 1');
    expect(r.stdout).toContain('[1] typescript rank 1 of 2 heard from 0');
  });

  it('passes the point-to-point conformance suite on 4 ranks over tcp', async () => {
    const r = await mpirun([
      '-np',
      '4',
      '--ssi',
      'rpi',
      'tcp',
      conformanceProgram,
      'modes',
      'overtaking',
      'wildcards',
      'probe',
      'cancel',
      'stress',
    ]);
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain('case stress ok');
  });

  it('propagates --ssi settings and -x variables to every rank, and runs them in -wd', async () => {
    const r = await mpirun(
      [
        '--ssi',
        'rpi_tcp_short',
        '4096',
        '-np',
        '2',
        '-x',
        'GREETING,PINNED=yes',
        '-wd',
        work,
        job,
        'env',
        'LAM_MPI_SSI_rpi_tcp_short',
      ],
      { GREETING: 'hi' },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`[0] env LAM_MPI_SSI_rpi_tcp_short=4096 cwd=${work}`);
    expect(r.stdout).toContain(`[1] env LAM_MPI_SSI_rpi_tcp_short=4096 cwd=${work}`);
    const exported = await mpirun(['-np', '1', '-x', 'GREETING,PINNED=yes', job, 'env', 'PINNED'], {
      GREETING: 'hi',
    });
    expect(exported.stdout).toContain('[0] env PINNED=yes');
    const greeting = await mpirun(['-np', '1', '-x', 'GREETING', job, 'env', 'GREETING'], {
      GREETING: 'hi',
    });
    expect(greeting.stdout).toContain('[0] env GREETING=hi');
    const secret = await mpirun(['-np', '1', job, 'env', 'SSI_JOB_SECRET']);
    expect(secret.stdout).toContain('[0] env SSI_JOB_SECRET=(unset)');
  });

  it('starts ranks without NODE_EXTRA_CA_CERTS and puts it back at MPI.init (unless told not to)', async () => {
    // A file Node cannot load: a rank whose Node start reads it warns "Ignoring extra certs"
    // (prefixed with its rank; mpirun's own start warns too, unprefixed).
    const certs = join(work, 'no-such-ca-bundle.pem');
    const env = { NODE_EXTRA_CA_CERTS: certs };
    const deferred = await mpirun(['-np', '2', 'ca-certs.mjs'], env);
    expect(deferred.code, deferred.stderr).toBe(0);
    for (const rank of [0, 1]) {
      expect(deferred.stdout).toContain(`[${rank}] ca-certs start= init=${certs} left=(unset)`);
    }
    expect(deferred.stderr).not.toMatch(/\[\d\] Warning: Ignoring extra certs/);
    for (const keep of [
      ['--ssi', 'mpi_base_defer_ca_certs', '0'],
      ['-x', 'NODE_EXTRA_CA_CERTS'],
    ]) {
      const r = await mpirun([...keep, '-np', '1', 'ca-certs.mjs'], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`[0] ca-certs start=${certs} init=${certs} left=(unset)`);
      expect(r.stderr).toContain(`[0] Warning: Ignoring extra certs from \`${certs}\``);
    }
  });

  it('starts JavaScript ranks from a start-up snapshot (mpi_base_startup_snapshot, default 1)', async () => {
    const cache = join(work, 'code-cache');
    const args = ['-np', '3', 'snapshot-probe.mjs'];
    for (const round of ['built', 'reused']) {
      const r = await mpirun(args, { SSI_CODE_CACHE: cache });
      expect(r.code, `${round}: ${r.stderr}`).toBe(0);
      for (const rank of [0, 1, 2]) {
        // The processes a rank starts with its options start as plain node (-e code runs).
        expect(r.stdout).toContain(
          `[${rank}] snapshot mpi=true rpi=true execArgv=(none) child=ok sum=3`,
        );
      }
      expect(readdirSync(cache).filter((f) => f.endsWith('.blob'))).toHaveLength(1);
    }
    const plain = '[0] snapshot mpi=false rpi=false execArgv=(none) child=ok sum=3';
    const no = await mpirun(['--ssi', 'mpi_base_startup_snapshot', '0', ...args], {
      SSI_CODE_CACHE: cache,
    });
    expect(no.code, no.stderr).toBe(0);
    expect(no.stdout).toContain(plain);
    // No code cache may be kept (SSI_CODE_CACHE off): no snapshot either, and no complaint.
    const off = await mpirun(args, { SSI_CODE_CACHE: 'off' });
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toContain(plain);
    expect(off.stderr).not.toContain('snapshot');
  });

  it('runs an application schema: several programs in one MPI_COMM_WORLD', async () => {
    const schema = join(work, 'app.schema');
    writeFileSync(schema, `# two parts, one world\n-np 2 ${job} ring\n-np 1 ${job} ring\n`);
    const r = await mpirun([schema]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('[0] ring: 0 1 2');
    expect(r.stdout).toContain('[2] rank 2 of 3');
  });
});

describe('mpirun: a failing job ends as a whole, with the reason', () => {
  it('a rank that exits non-zero: the others are killed, the exit status is its code', async () => {
    const r = await mpirun(['-np', '3', job, 'fail']);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/mpirun: rank 1 \(pid \d+ on n0\) exited with code 3/);
  });

  it('abort(7) ends the job with 7 and the message', async () => {
    const r = await mpirun(['-np', '3', job, 'abort']);
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('the answer is not 42');
    expect(r.stderr).toContain('rank 2 aborted the job');
  });

  it('a rank that exits 0 without MPI.finalize fails the job', async () => {
    const r = await mpirun(['-np', '2', job, 'no-finalize']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      '[0] rank 0: the process is exiting (code 0) without calling MPI.finalize',
    );
    expect(r.stderr).toMatch(/mpirun: rank 0 \(pid \d+ on n0\) exited with code 1/);
  });

  it('a program that does not exist is a clear error', async () => {
    const r = await mpirun(['-np', '2', join(work, 'nope.js')]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/nope\.js/);
    expect(r.stderr).not.toMatch(/internal error| {4}at /);
  });
});

describe('mpirun killed with SIGKILL (it cannot clean up)', () => {
  // By default the private universe's lamd runs inside mpirun and dies with it: its reaper then
  // stops the ranks and removes the session directory. With boot_base_in_process 0 the lamd is a
  // process of its own, which notices that mpirun is gone and halts.
  it.each([
    ['inside mpirun (the default)', []],
    ['a process of its own (boot_base_in_process 0)', ['--ssi', 'boot_base_in_process', '0']],
  ])('its private universe, %s, goes and takes the job along', async (_how, ssi) => {
    const child = start('mpirun', [...ssi, '-np', '2', job, 'wait']);
    let stdout = '';
    child.stdout?.on('data', (d) => (stdout += d));
    const ranks = () =>
      [...stdout.matchAll(/^\[\d\] waiting \d+ (\d+)$/gm)].map((m) => Number(m[1]));
    await waitFor('both ranks to report they are waiting', () => ranks().length === 2, 30_000);
    const session = sessionDirs().find((d) => d.endsWith(`-mpirun-${child.pid}`));
    expect(session, `the private universe's session directory in ${sessionDirs()}`).toBeDefined();
    const lamd = Number(readFileSync(join(tmpdir(), session!, 'lamd.pid'), 'utf8'));
    expect(lamd === child.pid).toBe(ssi.length === 0);
    const running = (pid: number) => isProcessAlive(pid); // (a zombie counts as gone)
    try {
      expect([lamd, ...ranks()].every(running)).toBe(true);
      child.kill('SIGKILL');
      await waitFor('the lamd of the private universe to stop', () => !running(lamd), 15_000);
      await waitFor('the ranks to stop', () => ranks().filter(running).length === 0, 15_000);
      await waitFor('the session directory to go', () => sessionDirs().length === 0, 15_000);
    } finally {
      if (running(lamd)) process.kill(lamd, 'SIGTERM'); // it stops its ranks and cleans up
      await waitFor('the lamd to stop after SIGTERM', () => !running(lamd), 10_000);
    }
  });
});

describe('mpirun: bad command lines', () => {
  it.each([
    [['-np', '0', job], /-np \(the command line\) needs a positive number of processes, got 0/],
    [['-np', 'many', job], /needs a positive number of processes, got many/],
    [['-np', '2'], /which program\?/],
    [['--frobnicate', job], /unknown option --frobnicate/],
    [['--ssi', 'rpi'], /--ssi rpi is missing its value/],
    [['-x', '1BAD', job], /-x 1BAD: not an environment variable name/],
    [['n7', job, 'ring'], /node n7 is not in the universe \(it has n0\)/],
    [['-nw', '-np', '2', job, 'ring'], /-nw needs a running universe: run lamboot first/],
  ])('%j', async (args, message) => {
    const r = await mpirun(args as string[]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/internal error| {4}at /);
  });

  it('an application schema with an unknown option names file and line', async () => {
    const schema = join(work, 'bad.schema');
    writeFileSync(schema, `-np 1 ${job} ring\n-bogus ${job}\n`);
    const r = await mpirun([schema]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${schema}:2: unknown option -bogus in an application schema`);
  });
});

describe('mpirun in a booted universe', () => {
  it('C places one rank per CPU, N one per node; -nw returns at once and the job still runs', async () => {
    const boot = await run('lamboot', []);
    expect(boot.code, boot.stderr).toBe(0);
    const n = await mpirun(['N', job, 'ring']);
    expect(n.code, n.stderr).toBe(0);
    expect(n.stdout).toContain('[0] ring: 0');
    const marker = join(work, 'nw');
    const nw = await mpirun(['-nw', '-np', '2', job, 'touch', marker]);
    expect(nw.code, nw.stderr).toBe(0);
    expect(nw.stderr).toMatch(/started 2 process\(es\) .* not waiting/);
    await waitFor(
      'both ranks of the -nw job to write their files',
      () => existsSync(`${marker}.0`) && existsSync(`${marker}.1`),
    );
    const halt = await run('lamhalt', []);
    expect(halt.code, halt.stderr).toBe(0);
    expect(sessionDirs()).toEqual([]);
  });
});
