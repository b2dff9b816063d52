import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PackageJson, WorkspacePackage } from './workspace';
import { repo, run, workspacePackages } from './workspace';

/**
 * Every public package must be publishable as it stands: the fields npm needs, the files its
 * exports/bin/manifest point at inside the tarball `pnpm pack` makes, and a tarball that
 * installs into a project outside the workspace and works there.
 */
const work = mkdtempSync(join(tmpdir(), 'ssi-publishable-'));
const published = workspacePackages().filter((p) => !p.json.private);
const tarballs = new Map<string, string>();

/** Paths a package promises to consumers: exports, bin, main/types and SSI module entries. */
function promisedFiles(json: PackageJson): string[] {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === 'string') out.push(v);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(json.exports);
  walk(json.bin);
  walk(json.main);
  walk(json.types);
  for (const m of json.ssi?.modules ?? []) out.push(m.entry);
  return [...new Set(out.map((p) => p.replace(/^\.\//, '')))];
}

beforeAll(() => {
  const dest = join(work, 'tarballs');
  mkdirSync(dest);
  for (const p of published) {
    const before = new Set(readdirSync(dest));
    run('pnpm', ['pack', '--pack-destination', dest], p.dir);
    const file = readdirSync(dest).find((f) => !before.has(f));
    if (!file) throw new Error(`pnpm pack made no tarball for ${p.json.name}`);
    tarballs.set(p.json.name, join(dest, file));
  }
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('every public package', () => {
  it('is found (the workspace has the packages this test is about)', () => {
    expect(published.map((p) => p.json.name)).toEqual(
      expect.arrayContaining(['@ssi/core', '@ssi/cli', 'create-ssi-plugin']),
    );
  });

  it.each(published.map((p) => [p.json.name, p] as [string, WorkspacePackage]))(
    '%s has the fields npm needs and its tarball holds every file it promises',
    (_name, p) => {
      for (const field of ['name', 'version', 'description', 'license', 'files', 'type']) {
        expect(p.json[field], `${relative(repo, p.dir)}/package.json: "${field}"`).toBeDefined();
      }
      expect(
        p.json.exports ?? p.json.bin,
        `${p.json.name} has neither exports nor bin`,
      ).toBeDefined();
      const listing = run('tar', ['tzf', tarballs.get(p.json.name)!], work);
      expect(listing).toContain('package/README.md');
      for (const file of promisedFiles(p.json)) {
        if (file === 'package.json') continue;
        expect(listing, `${p.json.name}: ${file} is missing from the tarball`).toContain(
          `package/${file}`,
        );
      }
      if (p.json.ssi) {
        // One copy of each framework per process: a module names its framework as a peer.
        expect(
          p.json.peerDependencies?.['@ssi/core'],
          `${p.json.name} must peer-depend on @ssi/core`,
        ).toBeDefined();
        for (const framework of ['@ssi/core', '@ssi/lam', '@ssi/mpi']) {
          expect(
            p.json.dependencies?.[framework],
            `${p.json.name} must not depend on ${framework}`,
          ).toBeUndefined();
        }
      }
    },
  );

  it('installs from its tarball into a project outside the workspace and works there', () => {
    const app = join(work, 'app');
    mkdirSync(app);
    const files = Object.fromEntries([...tarballs].map(([name, file]) => [name, `file:${file}`]));
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({
        name: 'outside-app',
        private: true,
        type: 'module',
        dependencies: files,
        pnpm: { overrides: files, onlyBuiltDependencies: Object.keys(files) },
      }),
    );
    run('pnpm', ['install', '--prefer-offline', '--config.auto-install-peers=false'], app);

    for (const p of published.filter((q) => q.json.exports?.['.'])) {
      run(
        process.execPath,
        ['--input-type=module', '-e', `await import(${JSON.stringify(p.json.name)})`],
        app,
      );
    }
    const report = JSON.parse(run(join(app, 'node_modules', '.bin', 'laminfo'), ['--json'], app));
    const declared = published.flatMap((p) =>
      (p.json.ssi?.modules ?? []).map((m) => `${m.type}/${m.name}`),
    );
    const modules: { type: string; name: string; usable: boolean }[] = report.modules;
    const found = modules.filter((m) => m.usable).map((m) => `${m.type}/${m.name}`);
    expect(found).toEqual(expect.arrayContaining(declared));
    expect(report.problems).toEqual([]);
    expect(existsSync(join(app, 'node_modules', '@ssi', 'cli'))).toBe(true);
  });
});
