import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { sessionUser } from '@ssi/lam';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startCli, waitChild, waitFor } from '../src/testing';

/**
 * Module discovery once per job, for real: mpirun scans the node_modules trees and hands the
 * ranks its result (SSI_DISCOVERY_HANDOVER); the ranks say so under mpi_verbose 1, and a module
 * installed beside the program (found through the hand-over) is opened in every rank.
 */
// Made in a hook, not when the file loads: a run filtered with -t that skips every test here
// runs no hook, and would leave the directory behind.
let work = '';
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'ssi-handover-cli-test-'));
});
const live = new Set<ChildProcess>();
const startedPids = new Set<number>();
const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) => !k.startsWith('LAM_MPI_SSI_') && k !== 'SSI_PARAM_FILE' && k !== 'SSI_MODULE_PATH',
  ),
);

/** mpirun in `cwd` (the user's project: mpirun's own checks see its node_modules too). */
function mpirun(args: string[], cwd: string, env: Record<string, string> = {}) {
  const child = startCli('mpirun', args, { ...cleanEnv, HOME: work, ...env }, { cwd });
  live.add(child);
  if (child.pid !== undefined) startedPids.add(child.pid);
  return waitChild(child, `mpirun ${args.join(' ')}`, 90_000).finally(() => live.delete(child));
}

/** Ranks of the private universes of the mpiruns this file started, still running. */
function strayRanks(): number[] {
  const ours = (dir: string) =>
    dir.startsWith(`ssi-${sessionUser()}@`) &&
    [...startedPids].some((pid) => dir.endsWith(`-mpirun-${pid}`));
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const dir = readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .find((e) => e.startsWith('LAM_MPI_SESSION_DIR='));
      if (!dir || !ours(basename(dir.slice('LAM_MPI_SESSION_DIR='.length)))) continue;
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

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A program outside the workspace with a coll module in its own node_modules. */
function appWithModule(): string {
  const app = join(work, 'app');
  const pkg = join(app, 'node_modules', 'coll-hello');
  mkdirSync(pkg, { recursive: true });
  const coll = { type: 'coll', name: 'hello', typeApi: '1.2.0', entry: './index.js' };
  const manifest = {
    name: 'coll-hello',
    version: '1.0.0',
    type: 'module',
    ssi: { modules: [coll] },
  };
  writeFileSync(join(pkg, 'package.json'), JSON.stringify(manifest));
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
  const mpiPackage = createRequire(import.meta.url).resolve('@ssi/mpi/package.json');
  const mpiUrl = pathToFileURL(join(dirname(mpiPackage), 'dist', 'index.js')).href;
  const program = join(app, 'job.mjs');
  writeFileSync(
    program,
    `const { MPI } = await import(${JSON.stringify(mpiUrl)});
const mpi = await MPI.init();
await mpi.COMM_WORLD.barrier();
console.log(\`barrier done \${mpi.COMM_WORLD.rank}\`);
await mpi.finalize();
`,
  );
  return program;
}

describe('discovery hand-over from mpirun to the ranks', () => {
  it('every rank takes its node_modules trees from the hand-over and finds the modules', async () => {
    const program = appWithModule();
    const r = await mpirun(
      ['--ssi', 'mpi_verbose', '1', '--ssi', 'coll', 'hello,lam_basic', '-np', '2', program],
      dirname(program),
    );
    expect(r.code, r.stderr).toBe(0);
    for (const rank of [0, 1]) {
      expect(r.stdout).toContain(`[${rank}] hello coll opened`);
      expect(r.stdout).toContain(`[${rank}] barrier done ${rank}`);
      expect(r.stderr).toMatch(
        new RegExp(
          `^\\[${rank}\\] \\[rank ${rank}\\] \\[ssi mpi\\] discovery: [1-9]\\d* node_modules tree\\(s\\) from mpirun's hand-over$`,
          'm',
        ),
      );
    }
    // Nothing was scanned by a rank itself: mpirun covered the program's and the install's trees.
    expect(r.stderr).not.toMatch(/hand-over ignored|scanned .* here/);
  });

  it('is off with SSI_DISCOVERY_HANDOVER=off: every rank scans and finds the same modules', async () => {
    const program = appWithModule();
    const args = ['--ssi', 'mpi_verbose', '1', '--ssi', 'coll', 'hello,lam_basic', '-np', '2'];
    const r = await mpirun([...args, program], dirname(program), {
      SSI_DISCOVERY_HANDOVER: 'off',
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('[1] hello coll opened');
    expect(r.stderr).not.toMatch(/hand-over/);
  });
});
