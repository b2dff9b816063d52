import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { sessionUser } from '@ssi/lam';
import { jobsProgram } from '@ssi/mpi/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startCli, waitChild, waitFor } from '../src/testing';

/**
 * Issue 19, "typos and bad values are caught early, once, with the right source", driven as a
 * user would: the built mpirun and lamboot, real ranks, exact messages.
 */
const fixtures = resolve(import.meta.dirname, 'fixtures');
const work = mkdtempSync(join(tmpdir(), 'ssi-early-checks-'));
const SUFFIX = `early-checks-${process.pid}`;
const live = new Set<ChildProcess>();
const startedPids = new Set<number>();
/** No setting of the developer's own environment may leak into these runs. */
const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) => !k.startsWith('LAM_MPI_SSI_') && k !== 'SSI_PARAM_FILE' && k !== 'SSI_MODULE_PATH',
  ),
);

function start(cmd: string, args: string[], env: Record<string, string> = {}): ChildProcess {
  const child = startCli(
    cmd,
    args,
    { ...cleanEnv, HOME: work, LAM_MPI_SESSION_SUFFIX: SUFFIX, ...env },
    { cwd: fixtures },
  );
  live.add(child);
  if (child.pid !== undefined) startedPids.add(child.pid);
  return child;
}

function run(cmd: string, args: string[], env: Record<string, string> = {}, timeoutMs = 90_000) {
  const child = start(cmd, args, env);
  return waitChild(child, `${cmd} ${args.join(' ')}`, timeoutMs).finally(() => live.delete(child));
}

const mpirun = (args: string[], env: Record<string, string> = {}) => run('mpirun', args, env);

/** A session directory of a universe this file started (booted, or an mpirun's private one). */
function isOurs(dir: string): boolean {
  if (!dir.startsWith(`ssi-${sessionUser()}@`)) return false;
  if (dir.endsWith(`-${SUFFIX}`)) return true;
  return [...startedPids].some((pid) => dir.endsWith(`-mpirun-${pid}`));
}

const sessionDirs = () => readdirSync(tmpdir()).filter(isOurs);

/** Processes started by one of our universes' lamds. */
function strayRanks(): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const dir = readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .find((e) => e.startsWith('LAM_MPI_SESSION_DIR='));
      if (!dir || !isOurs(basename(dir.slice('LAM_MPI_SESSION_DIR='.length)))) continue;
      if (/\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) continue;
      out.push(Number(pid));
    } catch {}
  }
  return out;
}

afterEach(async () => {
  for (const c of live) c.kill('SIGKILL');
  await waitFor('no rank left running', () => strayRanks().length === 0, 10_000).catch((err) => {
    for (const pid of strayRanks()) process.kill(pid, 'SIGKILL');
    throw err;
  });
});

afterAll(async () => {
  await run('lamhalt', []).catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

function paramFile(name: string, text: string): string {
  const file = join(work, name);
  writeFileSync(file, text);
  return file;
}

describe('mistakes mpirun can see are refused before anything starts, in one line', () => {
  const file = paramFile('bad.conf', '# mine\ncoll_crossover = abc\n');
  it.each([
    [
      'a bad value given with --ssi is blamed on the command line',
      ['--ssi', 'coll_crossover', 'abc'],
      {},
      'mpirun: parameter coll_crossover expects an integer, but the command line (--ssi) gives "abc"',
    ],
    [
      'a value out of range, from the environment',
      [],
      { LAM_MPI_SSI_mpi_base_init_timeout: '-1' },
      'mpirun: parameter mpi_base_init_timeout must be at least 1, but the environment (LAM_MPI_SSI_mpi_base_init_timeout) gives "-1"',
    ],
    [
      'a bad value from the parameter file names its line',
      [],
      { SSI_PARAM_FILE: file },
      `mpirun: parameter coll_crossover expects an integer, but the parameter file (${file}:2) gives "abc"`,
    ],
    [
      'a bad value of a module parameter (the module is opened to learn it)',
      ['--ssi', 'rpi_tcp_short', 'lots'],
      {},
      'mpirun: parameter rpi_tcp_short expects an integer, but the command line (--ssi) gives "lots"',
    ],
    [
      'an excluded module that is not installed, with the closest installed name',
      ['--ssi', 'coll', '^tunde'],
      {},
      /^mpirun: the command line \(--ssi\) excludes coll module "tunde", which is not installed; did you mean "tuned"\? \(installed coll modules: [a-z_, ]*tuned[a-z_, ]*\)$/,
    ],
    [
      'an unknown name when ssi_base_unknown_params is "error"',
      ['--ssi', 'rpi_tcp_shrot', '100', '--ssi', 'ssi_base_unknown_params', 'error'],
      {},
      'mpirun: unknown SSI parameter "rpi_tcp_shrot" from the command line (--ssi); did you mean "rpi_tcp_short"? (ssi_base_unknown_params is "error")',
    ],
  ])('%s', async (_what, args, env, line) => {
    const r = await mpirun(['-np', '2', ...args, jobsProgram, 'ring'], env);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    if (typeof line === 'string') expect(r.stderr).toBe(`${line}\n`);
    else expect(r.stderr.trimEnd()).toMatch(line);
    expect(sessionDirs()).toEqual([]); // nothing was booted
  });

  it('--ssi rpi nosuch: reported once, before the universe boots', async () => {
    const r = await mpirun(['-np', '2', '--ssi', 'rpi', 'nosuch', jobsProgram, 'ring']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^mpirun: the command line \(--ssi\) selects rpi module "nosuch", which is not installed \(installed rpi modules: [a-z_, ]*tcp[a-z_, ]*\)\n$/,
    );
    expect(sessionDirs()).toEqual([]);
  });
});

describe('mistakes that do not stop the job are said once, by mpirun', () => {
  it('unknown --ssi and LAM_MPI_SSI_* names: one warning each with the closest name, the job runs', async () => {
    const r = await mpirun(['-np', '3', '--ssi', 'rpi_tcp_shrot', '100', jobsProgram, 'ring'], {
      LAM_MPI_SSI_coll_crossver: '3',
    });
    expect(r.stderr).toBe(
      'mpirun: warning: unknown SSI parameter "coll_crossver" from the environment (LAM_MPI_SSI_coll_crossver); did you mean "coll_crossover"?\n' +
        'mpirun: warning: unknown SSI parameter "rpi_tcp_shrot" from the command line (--ssi); did you mean "rpi_tcp_short"?\n',
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('[0] ring: 0 1 2');
  });

  it('a rank sees the source mpirun got each value from, not "the environment"', async () => {
    const file = paramFile('good.conf', '# mine\ncoll_reduce_crossover = 6\n');
    const r = await mpirun(
      [
        '-np',
        '2',
        '--ssi',
        'coll_crossover',
        '5',
        'param-source.mjs',
        'coll_crossover',
        'coll_reduce_crossover',
        'coll_base_timeout',
      ],
      { SSI_PARAM_FILE: file, LAM_MPI_SSI_coll_base_timeout: '100' },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      '[0] coll_crossover=5 from command line (--ssi)\n' +
        `[0] coll_reduce_crossover=6 from parameter file (${file}:2)\n` +
        '[0] coll_base_timeout=100 from environment (LAM_MPI_SSI_coll_base_timeout)\n',
    );
  });
});

describe('a boot schema key typo', () => {
  it('is an error naming file:line and the closest known key; nothing boots', async () => {
    const hosts = paramFile('hosts', 'localhost cpus=2\n');
    const r = await run('lamboot', [hosts]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${hosts}:1: unknown key "cpus"; did you mean "cpu"?`);
    expect(sessionDirs()).toEqual([]);
  });
});

describe('SIGTERM to mpirun', () => {
  it('stops the job and says so once; no rank reports a lost connection', async () => {
    const child = start('mpirun', ['-np', '4', jobsProgram, 'wait']);
    let stdout = '';
    child.stdout!.on('data', (d) => {
      stdout += d;
    });
    const done = waitChild(child, 'mpirun -np 4 jobs wait', 60_000).finally(() =>
      live.delete(child),
    );
    await waitFor(
      'all 4 ranks to print "waiting"',
      () => (stdout.match(/waiting \d+ \d+/g) ?? []).length === 4,
      30_000,
    );
    child.kill('SIGTERM');
    const r = await done;
    expect(r.stderr).toBe('mpirun: SIGTERM: stopping the job\n');
    expect(r.code).toBe(143);
  });
});

/** A drop-in coll module package `coll-<name>` under `dir`, with `body` as its module object. */
function dropInColl(dir: string, name: string, typeApi: string, body: string): void {
  const pkg = join(dir, `coll-${name}`);
  mkdirSync(pkg, { recursive: true });
  writeFileSync(
    join(pkg, 'package.json'),
    JSON.stringify({
      name: `coll-${name}`,
      version: '1.0.0',
      type: 'module',
      ssi: { modules: [{ type: 'coll', name, typeApi, entry: './index.js' }] },
    }),
  );
  writeFileSync(
    join(pkg, 'index.js'),
    `export default { ssiApi: '1.0.0', type: 'coll', typeApi: '${typeApi}', name: '${name}', version: '1.0.0', ${body} };\n`,
  );
}

describe('a coll module the user named that cannot run', () => {
  it('is a warning naming why, said once; the job runs on the next module', async () => {
    const dir = join(work, 'coll-failures');
    dropInColl(
      dir,
      'boom',
      '1.2.0',
      `query() { throw new Error('no dissemination here'); }, init: () => ({})`,
    );
    dropInColl(dir, 'old', '0.9.0', 'query: () => ({ priority: 100 }), init: () => ({})');
    const r = await mpirun(['-np', '3', '--ssi', 'coll', 'boom,old,lam_basic', 'barrier.mjs'], {
      SSI_MODULE_PATH: dir,
    });
    expect(r.code, r.stderr).toBe(0);
    const named = 'named by --ssi coll boom,old,lam_basic, cannot run';
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines, r.stderr).toHaveLength(2);
    expect(lines).toContain(
      `[0] warning: coll module "boom", ${named}: its query failed: no dissemination here; lam_basic serves COMM_WORLD`,
    );
    const old = new RegExp(
      `^\\[0\\] warning: coll module "old", ${named}: it is unavailable: coll module "old" .* is written for coll API 0\\.9\\.0, .*; lam_basic serves COMM_WORLD$`,
    );
    expect(
      lines.filter((l) => old.test(l)),
      r.stderr,
    ).toHaveLength(1);
    expect(r.stdout).toContain('[2] barrier done 2');
  });
});

describe('SSI_MODULE_PATH in a booted universe', () => {
  it('reaches the ranks without -x: a drop-in coll module outside the workspace is used', async () => {
    const dropIns = join(work, 'drop-ins');
    const pkg = join(dropIns, 'coll-hello');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(
      join(pkg, 'package.json'),
      JSON.stringify({
        name: 'coll-hello',
        version: '1.0.0',
        type: 'module',
        ssi: { modules: [{ type: 'coll', name: 'hello', typeApi: '1.2.0', entry: './index.js' }] },
      }),
    );
    writeFileSync(
      join(pkg, 'index.js'),
      `export default {
  ssiApi: '1.0.0', type: 'coll', typeApi: '1.2.0', name: 'hello', version: '1.0.0',
  open() { console.log('hello coll opened'); },
  query: () => ({ priority: 0 }),
  init: () => ({}),
};
`,
    );
    const boot = await run('lamboot', []); // the lamds know nothing of the drop-in directory
    expect(boot.code, boot.stderr).toBe(0);
    const r = await mpirun(['-np', '2', '--ssi', 'coll', 'hello,lam_basic', 'barrier.mjs'], {
      SSI_MODULE_PATH: dropIns,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('[0] hello coll opened');
    expect(r.stdout).toContain('[1] hello coll opened');
    expect(r.stdout).toContain('[1] barrier done 1');
    const halt = await run('lamhalt', []);
    expect(halt.code, halt.stderr).toBe(0);
  });
});
