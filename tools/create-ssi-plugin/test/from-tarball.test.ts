import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packScaffold, scaffoldFromTarball } from './scaffold-tarball';

/** `npx create-ssi-plugin` before anything is published: the packed tarball alone must run. */
const pkgDir = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'ssi-scaffold-tarball-'));

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('create-ssi-plugin from its packed tarball', () => {
  it('has no @ssi dependency and scaffolds a coll and an rpi module with npm exec', () => {
    const json = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
    expect(Object.keys(json.dependencies ?? {}).filter((d) => d.startsWith('@ssi/'))).toEqual([]);

    const tarball = packScaffold(work);
    const user = join(work, 'user');
    const r = scaffoldFromTarball(tarball, user, ['./my-coll', '--type', 'coll', '--name', 'tree']);
    expect(r.stdout).toContain('my-coll');
    const made = JSON.parse(readFileSync(join(user, 'my-coll', 'package.json'), 'utf8'));
    expect(made.name).toBe('ssi-coll-tree');
    expect(made.ssi.modules).toMatchObject([{ type: 'coll', name: 'tree' }]);
    expect(existsSync(join(user, 'my-coll', 'index.js'))).toBe(true);

    // The rpi template's protocol files travel in the tarball (templates/), and land beside index.js.
    scaffoldFromTarball(tarball, user, ['./my-rpi', '--type', 'rpi', '--name', 'fab']);
    const rpi = JSON.parse(readFileSync(join(user, 'my-rpi', 'package.json'), 'utf8'));
    for (const file of rpi.files) expect(existsSync(join(user, 'my-rpi', file)), file).toBe(true);
    expect(rpi.files).toContain('transport.js');
  });
});
