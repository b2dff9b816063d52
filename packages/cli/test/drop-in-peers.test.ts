import type { ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { sessionUser } from '@ssi/lam';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startCli, waitChild, waitFor } from '../src/testing';

/**
 * Issue 19: "a drop-in must be able to import its peer packages (`@ssi/core`, `@ssi/mpi`) from the
 * installation that loads it". The drop-in lives in a fresh temporary directory outside the
 * workspace, with no node_modules anywhere above it, and imports both; real mpirun jobs use it.
 */
const fixtures = resolve(import.meta.dirname, 'fixtures');
const work = mkdtempSync(join(tmpdir(), 'ssi-drop-in-peers-'));
const SUFFIX = `drop-in-peers-${process.pid}`;
const live = new Set<ChildProcess>();
const startedPids = new Set<number>();
const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) => !k.startsWith('LAM_MPI_SSI_') && k !== 'SSI_PARAM_FILE' && k !== 'SSI_MODULE_PATH',
  ),
);

function run(cmd: string, args: string[], env: Record<string, string> = {}) {
  const child = startCli(
    cmd,
    args,
    { ...cleanEnv, HOME: work, LAM_MPI_SESSION_SUFFIX: SUFFIX, ...env },
    { cwd: fixtures },
  );
  live.add(child);
  if (child.pid !== undefined) startedPids.add(child.pid);
  return waitChild(child, `${cmd} ${args.join(' ')}`, 90_000).finally(() => live.delete(child));
}

/** A session directory of a universe this file started (booted, or an mpirun's private one). */
function isOurs(dir: string): boolean {
  if (!dir.startsWith(`ssi-${sessionUser()}@`)) return false;
  if (dir.endsWith(`-${SUFFIX}`)) return true;
  return [...startedPids].some((pid) => dir.endsWith(`-mpirun-${pid}`));
}

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

/** Every directory from `dir` up to the root: none may hold a node_modules the drop-in could use. */
function ancestors(dir: string): string[] {
  const parent = dirname(dir);
  return parent === dir ? [dir] : [dir, ...ancestors(parent)];
}

/**
 * `coll-peer`: imports `Mpi` from '@ssi/mpi' and `isSsiError` from '@ssi/core'; its init says
 * whether the `Mpi` it got is the one running the job (a second copy has no current instance).
 */
function peerDropIn(dir: string): void {
  const pkg = join(dir, 'coll-peer');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(
    join(pkg, 'package.json'),
    JSON.stringify({
      name: 'coll-peer',
      version: '1.0.0',
      type: 'module',
      peerDependencies: { '@ssi/core': '^1.0.0', '@ssi/mpi': '^1.0.0' },
      ssi: { modules: [{ type: 'coll', name: 'peer', typeApi: '1.2.0', entry: './index.js' }] },
    }),
  );
  writeFileSync(
    join(pkg, 'index.js'),
    `import { isSsiError } from '@ssi/core';
import { Mpi } from '@ssi/mpi';

export default {
  ssiApi: '1.0.0', type: 'coll', typeApi: '1.2.0', name: 'peer', version: '1.0.0',
  query: () => ({ priority: 50 }),
  init(comm) {
    const same = Mpi.current() !== null;
    console.log(\`peer init size \${comm.size}: the job's own @ssi/mpi \${same}, @ssi/core \${typeof isSsiError}\`);
    return {};
  },
};
`,
  );
}

describe('a drop-in coll module importing @ssi/mpi and @ssi/core, with no node_modules', () => {
  const dropIns = join(work, 'drop-ins');
  peerDropIn(dropIns);

  it('has nothing to import them from but the installation that loads it', () => {
    for (const dir of ancestors(join(dropIns, 'coll-peer'))) {
      expect(existsSync(join(dir, 'node_modules')), dir).toBe(false);
    }
  });

  it('gets the job’s own copies in a private universe (3 ranks)', async () => {
    const r = await run('mpirun', ['-np', '3', '--ssi', 'coll', 'peer', 'barrier.mjs'], {
      SSI_MODULE_PATH: dropIns,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    for (const rank of [0, 1, 2]) {
      expect(r.stdout).toContain(
        `[${rank}] peer init size 3: the job's own @ssi/mpi true, @ssi/core function`,
      );
      expect(r.stdout).toContain(`[${rank}] barrier done ${rank}`);
    }
  });

  it('is opened by laminfo (the commands share their copies too)', async () => {
    const r = await run('laminfo', ['--param', 'coll', 'peer'], { SSI_MODULE_PATH: dropIns });
    expect(`${r.stdout}${r.stderr}`).not.toContain('failed to load');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('coll_peer_priority');
  });

  it('gets the job’s own copies in a booted universe (2 ranks)', async () => {
    const boot = await run('lamboot', []);
    expect(boot.code, boot.stderr).toBe(0);
    const r = await run('mpirun', ['-np', '2', '--ssi', 'coll', 'peer', 'barrier.mjs'], {
      SSI_MODULE_PATH: dropIns,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    for (const rank of [0, 1]) {
      expect(r.stdout).toContain(
        `[${rank}] peer init size 2: the job's own @ssi/mpi true, @ssi/core function`,
      );
      expect(r.stdout).toContain(`[${rank}] barrier done ${rank}`);
    }
    const halt = await run('lamhalt', []);
    expect(halt.code, halt.stderr).toBe(0);
  });
});
