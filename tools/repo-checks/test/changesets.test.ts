import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repo, run, workspacePackages } from './workspace';

/**
 * The release flow in a scratch copy of the repository: a changeset on one plugin bumps that
 * plugin and only what depends on it; a compatible release of the framework it peers on does not
 * drag every plugin along (independent versions per package).
 */
let scratch = '';

function versions(): Record<string, string> {
  return Object.fromEntries(workspacePackages(scratch).map((p) => [p.json.name, p.json.version]));
}

function writePackage(dir: string, json: Record<string, unknown>) {
  mkdirSync(join(scratch, dir), { recursive: true });
  writeFileSync(
    join(scratch, dir, 'package.json'),
    `${JSON.stringify({ version: '1.0.0', type: 'module', ...json }, null, 2)}\n`,
  );
}

function changeset(name: string, bumps: Record<string, 'patch' | 'minor' | 'major'>) {
  const head = Object.entries(bumps)
    .map(([pkg, bump]) => `"${pkg}": ${bump}`)
    .join('\n');
  writeFileSync(join(scratch, '.changeset', `${name}.md`), `---\n${head}\n---\n\n${name}\n`);
}

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'ssi-changesets-'));
  const tracked = run('git', ['ls-files', '-z'], repo).split('\0').filter(Boolean);
  // The working tree as it is: a tracked file deleted but not yet committed is left out.
  for (const file of tracked.filter((f) => existsSync(join(repo, f)))) {
    cpSync(join(repo, file), join(scratch, file), { recursive: true });
  }
  symlinkSync(join(repo, 'node_modules'), join(scratch, 'node_modules'));
  // Changesets pending in the repository are not this test's: only its own ones are released.
  for (const f of readdirSync(join(scratch, '.changeset'))) {
    if (f.endsWith('.md')) rmSync(join(scratch, '.changeset', f));
  }
  // A plugin peering on core, and a meta package (like @ssi/recommended) depending on it.
  writePackage('plugins/rpi-example', {
    name: '@ssi/rpi-example',
    peerDependencies: { '@ssi/core': '^1.0.0' },
    devDependencies: { '@ssi/core': 'workspace:*' },
  });
  writePackage('packages/example-meta', {
    name: '@ssi/example-meta',
    dependencies: { '@ssi/rpi-example': 'workspace:^1.0.0' },
  });
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function release(name: string, bumps: Record<string, 'patch' | 'minor' | 'major'>) {
  const before = versions();
  changeset(name, bumps);
  run(join(scratch, 'node_modules', '.bin', 'changeset'), ['version'], scratch);
  const after = versions();
  const changed = Object.keys(after)
    .filter((n) => after[n] !== before[n])
    .sort();
  return { after, changed };
}

describe('changesets', () => {
  it('bumps a plugin alone when its dependents still accept the new version', () => {
    const { after, changed } = release('fix-example', { '@ssi/rpi-example': 'patch' });
    expect(changed).toEqual(['@ssi/rpi-example']);
    expect(after['@ssi/rpi-example']).toBe('1.0.1');
    expect(readFileSync(join(scratch, 'plugins/rpi-example/CHANGELOG.md'), 'utf8')).toContain(
      'fix-example',
    );
  });

  it('bumps a plugin and exactly what depends on it when the release leaves their range', () => {
    const { after, changed } = release('break-example', { '@ssi/rpi-example': 'major' });
    expect(changed).toEqual(['@ssi/example-meta', '@ssi/rpi-example']);
    expect(after['@ssi/rpi-example']).toBe('2.0.0');
    const meta = JSON.parse(
      readFileSync(join(scratch, 'packages/example-meta/package.json'), 'utf8'),
    );
    expect(meta.dependencies['@ssi/rpi-example']).toBe('workspace:^2.0.0');
  });

  it('releases a compatible core without dragging along the plugins that peer on it', () => {
    const { after, changed } = release('core-feature', { '@ssi/core': 'minor' });
    expect(changed).toEqual(['@ssi/core']);
    expect(after['@ssi/core']).toBe('1.1.0');
  });
});
