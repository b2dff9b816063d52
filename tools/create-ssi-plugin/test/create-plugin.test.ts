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
