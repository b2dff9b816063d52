import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FRAMEWORKS, readPackageManifest } from '@ssi/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createPlugin } from '../src/index';

describe('create-ssi-plugin', () => {
  const dirs: string[] = [];
  const temp = () => {
    const d = mkdtempSync(join(tmpdir(), 'ssi-scaffold-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('writes a package whose manifest core reads and whose module object matches it', async () => {
    const dir = join(temp(), 'p');
    createPlugin({ dir, type: 'coll', name: 'tree_x' });
    const manifest = readPackageManifest(join(dir, 'package.json'))!;
    expect(manifest.packageName).toBe('ssi-coll-tree-x');
    expect(manifest.modules[0]).toMatchObject({
      type: 'coll',
      name: 'tree_x',
      entry: './index.js',
    });
    const mod = (await import(join(dir, 'index.js'))).default;
    expect(mod).toMatchObject({
      type: 'coll',
      name: 'tree_x',
      typeApi: FRAMEWORKS.coll.api,
      ssiApi: '1.0.0',
    });
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain(
      '`coll_tree_x_priority` | int | 10',
    );
  });

  it('writes an rpi package with its transport files, @ssi/mpi as a peer, and no tcp to require', () => {
    const dir = join(temp(), 'r');
    createPlugin({ dir, type: 'rpi', name: 'fab' });
    const json = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    expect(json.files).toEqual([
      'index.js',
      'frames.js',
      'connections.js',
      'transport.js',
      'README.md',
    ]);
    expect(json.peerDependencies).toEqual({ '@ssi/core': '^1.0.0', '@ssi/mpi': '^1.0.0' });
    expect(json.ssi.modules[0].requires).toBeUndefined();
    // The protocol files are the template's, as they are; index.js names the module.
    const template = join(import.meta.dirname, '..', 'templates', 'rpi');
    for (const f of ['frames.js', 'connections.js', 'transport.js']) {
      expect(readFileSync(join(dir, f), 'utf8')).toBe(readFileSync(join(template, f), 'utf8'));
    }
    const index = readFileSync(join(dir, 'index.js'), 'utf8');
    expect(index).toContain("new Transport('fab', host,");
    expect(index).not.toContain('openModule');
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    for (const p of [
      'priority` | int | 10',
      'short` | int | 65536',
      'connect_timeout` | int | 30000',
    ]) {
      expect(readme).toContain(`\`rpi_fab_${p}`);
    }
  });

  it('refuses an unknown type, a bad name, a bad version and a non-empty directory', () => {
    const base = temp();
    expect(() => createPlugin({ dir: join(base, 'a'), type: 'gpu', name: 'x' })).toThrow(
      'unknown module type "gpu"; expected one of boot, crlam, rpi, coll, crmpi',
    );
    expect(() => createPlugin({ dir: join(base, 'b'), type: 'rpi', name: 'My-Mod' })).toThrow(
      /must be lower case/,
    );
    expect(() =>
      createPlugin({ dir: join(base, 'c'), type: 'rpi', name: 'x', typeApi: 'v2' }),
    ).toThrow(/--type-api "v2" is not a version/);
    writeFileSync(join(base, 'file'), '');
    expect(() => createPlugin({ dir: base, type: 'rpi', name: 'x' })).toThrow(/is not empty/);
  });
});
