import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `npx create-ssi-plugin` before anything is published: the packed tarball alone must run,
 * with the @ssi scope's registry pointed at a closed port so that any @ssi dependency it still
 * had would fail here as it 404s for a user.
 */
const pkgDir = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'ssi-scaffold-tarball-'));

afterAll(() => rmSync(work, { recursive: true, force: true }));

function mustRun(cmd: string, args: string[], cwd: string) {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^npm_config_/i.test(k)),
  );
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 180_000, env });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')} in ${cwd}: ${r.error.message}`);
  if (r.status !== 0) {
    throw new Error(
      `${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`,
    );
  }
  return r;
}

describe('create-ssi-plugin from its packed tarball', () => {
  it('has no @ssi dependency and scaffolds a coll module with npm exec', () => {
    const json = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
    expect(Object.keys(json.dependencies ?? {}).filter((d) => d.startsWith('@ssi/'))).toEqual([]);

    const tarballs = join(work, 'tarballs');
    mkdirSync(tarballs);
    mustRun('pnpm', ['pack', '--pack-destination', tarballs], pkgDir);
    const [tarball] = readdirSync(tarballs);
    const user = join(work, 'user');
    mkdirSync(user);
    const r = mustRun(
      'npm',
      [
        'exec',
        '--yes',
        `--package=${join(tarballs, tarball!)}`,
        '--@ssi:registry=http://127.0.0.1:9/',
        '--',
        'create-ssi-plugin',
        './my-coll',
        '--type',
        'coll',
        '--name',
        'tree',
      ],
      user,
    );
    expect(r.stdout).toContain('my-coll');
    const made = JSON.parse(readFileSync(join(user, 'my-coll', 'package.json'), 'utf8'));
    expect(made.name).toBe('ssi-coll-tree');
    expect(made.ssi.modules).toMatchObject([{ type: 'coll', name: 'tree' }]);
    expect(existsSync(join(user, 'my-coll', 'index.js'))).toBe(true);
  });
});
