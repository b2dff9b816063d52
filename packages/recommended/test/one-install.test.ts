import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A newcomer's install, done for real: every workspace package @ssi/recommended needs is packed
 * with `pnpm pack` (as publishing would), then an empty project runs `npm install` of the one
 * meta package. `overrides` point every @ssi/* name at its tarball and the @ssi scope's registry
 * at a closed port, so nothing of ours can come from a registry; third-party packages (tsx,
 * msgpackr) come from npm's cache or registry as for any user.
 */
const here = resolve(import.meta.dirname, '..');
const repo = resolve(here, '../..');
const work = mkdtempSync(join(tmpdir(), 'ssi-recommended-'));
const NO_REGISTRY = 'http://127.0.0.1:9/';

/** This process's environment without pnpm's npm_config_* and any SSI settings of the caller. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !/^npm_config_/i.test(k) && !k.startsWith('LAM_MPI_SSI_') && k !== 'SSI_MODULE_PATH',
    ),
  );
}

function mustRun(cmd: string, args: string[], cwd: string, timeoutMs = 180_000) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: timeoutMs, env: cleanEnv() });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')} in ${cwd}: ${r.error.message}`);
  if (r.status !== 0) {
    throw new Error(
      `${cmd} ${args.join(' ')} exited ${r.status ?? r.signal} in ${cwd}:\n${r.stdout}\n${r.stderr}`,
    );
  }
  return r;
}

/** Workspace package directories by name: packages/* and plugins/*. */
function workspaceDirs(): Map<string, string> {
  const dirs = new Map<string, string>();
  for (const group of ['packages', 'plugins']) {
    for (const d of readdirSync(join(repo, group))) {
      const dir = join(repo, group, d);
      try {
        dirs.set(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name, dir);
      } catch {
        // not a package
      }
    }
  }
  return dirs;
}

/** Packs @ssi/recommended and every workspace package it reaches through `workspace:` deps. */
function packClosure(): Map<string, string> {
  const dirs = workspaceDirs();
  const out = join(work, 'tarballs');
  mkdirSync(out);
  const tarballs = new Map<string, string>();
  const visit = (name: string) => {
    if (tarballs.has(name)) return;
    const dir = dirs.get(name);
    if (!dir) throw new Error(`${name} is not a package of this workspace`);
    const before = new Set(readdirSync(out));
    mustRun('pnpm', ['pack', '--pack-destination', out], dir);
    const file = readdirSync(out).find((f) => !before.has(f));
    if (!file) throw new Error(`pnpm pack made no tarball for ${name}`);
    tarballs.set(name, join(out, file));
    const json = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    for (const [dep, spec] of Object.entries<string>(json.dependencies ?? {})) {
      if (spec.startsWith('workspace:')) visit(dep);
    }
  };
  visit('@ssi/recommended');
  return tarballs;
}

const HELLO = `import { MPI } from '@ssi/mpi';
const mpi = await MPI.init();
const world = mpi.COMM_WORLD;
const sum = await world.allreduce(world.rank + 1, MPI.SUM);
console.log(\`hello from \${world.rank} of \${world.size}, sum \${sum}\`);
await mpi.finalize();
`;

let project = '';
let tarballs = new Map<string, string>();

beforeAll(() => {
  tarballs = packClosure();
  project = join(work, 'app');
  mkdirSync(project);
  const files = Object.fromEntries([...tarballs].map(([n, f]) => [n, `file:${f}`]));
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({
      name: 'newcomer-app',
      private: true,
      dependencies: { '@ssi/recommended': files['@ssi/recommended'] },
      overrides: files,
    }),
  );
  writeFileSync(join(project, 'hello.mjs'), HELLO);
  // TypeScript with top-level await, in a package.json without "type": "module".
  writeFileSync(
    join(project, 'app.ts'),
    HELLO.replace('world.rank + 1,', 'world.rank + 1 as number,'),
  );
  mustRun(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', `--@ssi:registry=${NO_REGISTRY}`],
    project,
    300_000,
  );
}, 600_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('npm install @ssi/recommended, from packed tarballs, in an empty project', () => {
  it('packs the workspace: dependencies as plain version ranges', () => {
    const listing = mustRun(
      'tar',
      ['xzOf', tarballs.get('@ssi/recommended')!, 'package/package.json'],
      work,
    );
    const deps = JSON.parse(listing.stdout).dependencies as Record<string, string>;
    expect(Object.values(deps).filter((s) => s.startsWith('workspace:'))).toEqual([]);
    expect(deps['@ssi/cli']).toBe('^1.0.0');
  });

  it('runs a 4-rank job with `npx mpirun`', () => {
    const r = mustRun('npx', ['--no-install', 'mpirun', '-np', '4', 'hello.mjs'], project, 120_000);
    const lines = r.stdout.trim().split('\n').sort();
    expect(lines).toEqual([0, 1, 2, 3].map((i) => `[${i}] hello from ${i} of 4, sum 10`));
  });

  it('serves the world with tuned by default, lam_basic filling in', () => {
    const r = mustRun(
      'npx',
      ['--no-install', 'mpirun', '-np', '2', '--ssi', 'coll_verbose', '10', 'hello.mjs'],
      project,
      120_000,
    );
    const output = r.stdout + r.stderr;
    expect(output).toContain('hello from 1 of 2, sum 3');
    expect(output).toMatch(/COMM_WORLD: coll module tuned, missing functions from lam_basic/);
  });

  it('runs the root README\'s headline: a TypeScript app.ts, crtcp and cr self, no "type": "module"', () => {
    const readme = readFileSync(join(repo, 'README.md'), 'utf8');
    const headline = 'npx mpirun -np 4 --ssi rpi crtcp --ssi cr self app.ts';
    expect(readme).toContain(`    ${headline}\n`);
    const [, ...args] = headline.split(' ');
    const r = mustRun('npx', ['--no-install', ...args], project, 120_000);
    const lines = r.stdout.trim().split('\n').sort();
    expect(lines).toEqual([0, 1, 2, 3].map((i) => `[${i}] hello from ${i} of 4, sum 10`));
  });

  it('has every default module: laminfo lists tcp, crtcp, tuned, lam_basic, rsh, tm, slurm, self', () => {
    const r = mustRun('npx', ['--no-install', 'laminfo'], project);
    for (const [type, name] of [
      ['rpi', 'tcp'],
      ['rpi', 'crtcp'],
      ['coll', 'tuned'],
      ['coll', 'lam_basic'],
      ['boot', 'rsh'],
      ['boot', 'tm'],
      ['boot', 'slurm'],
      ['crlam', 'self'],
      ['crmpi', 'self'],
    ]) {
      expect(r.stdout).toMatch(new RegExp(`SSI ${type}: ${name} \\(`));
    }
  });

  it('links every command of @ssi/cli as its own bin, e.g. `npx lamboot --version`', () => {
    const cli = JSON.parse(readFileSync(join(repo, 'packages/cli/package.json'), 'utf8'));
    expect(mustRun('npx', ['--no-install', 'lamboot', '--version'], project).stdout).toBe(
      `lamboot (SSI for Node) ${cli.version}\n`,
    );
    for (const cmd of Object.keys(cli.bin)) {
      const bin = join(project, 'node_modules', '.bin', cmd);
      expect(mustRun(bin, ['--version'], project).stdout).toBe(
        `${cmd} (SSI for Node) ${cli.version}\n`,
      );
    }
  });
});
