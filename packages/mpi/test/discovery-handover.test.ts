import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DiscoveryOptions, discoverModules } from '@ssi/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DISCOVERY_HANDOVER_ENV,
  describeHandoverUse,
  discoveryHandoverEnv,
  readDiscoveryHandover,
} from '../src/discovery-handover';

/**
 * The hand-over of module discovery from mpirun to its ranks, on node_modules trees built here:
 * a rank given a current hand-over reads only the packages listed, and finds exactly what its
 * own scan would; anything stale, foreign or corrupt falls back to the rank's own scan.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function writePackage(dir: string, pkg: Record<string, unknown>, entry = true): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg));
  if (entry) writeFileSync(join(dir, 'index.js'), 'export default {};\n');
}

const rpi = (pkgName: string, name: string) => ({
  name: pkgName,
  version: '1.0.0',
  ssi: { modules: [{ type: 'rpi', name, typeApi: '2.0.0', entry: './index.js' }] },
});

/** app/node_modules with two modules (one scoped), ordinary packages and a bad manifest. */
function install(): { app: string; tree: string } {
  const root = mkdtempSync(join(tmpdir(), 'ssi-handover-test-'));
  dirs.push(root);
  const app = join(root, 'app');
  const tree = join(app, 'node_modules');
  writePackage(join(tree, 'ssi-rpi-alpha'), rpi('ssi-rpi-alpha', 'alpha'));
  writePackage(join(tree, '@x', 'rpi-beta'), rpi('@x/rpi-beta', 'beta'));
  for (let i = 0; i < 20; i++)
    writePackage(join(tree, `plain-${i}`), { name: `plain-${i}` }, false);
  writePackage(join(tree, 'broken'), { name: 'broken', ssi: { modules: [{ type: 'rpi' }] } });
  return { app, tree };
}

const names = (o: DiscoveryOptions) => discoverModules(o).modules.map((m) => m.name);

/** A path's mtime moved 10 s on: a change no file-system timestamp resolution can hide. */
function touch(path: string): void {
  const later = new Date(Date.now() + 10_000);
  utimesSync(path, later, later);
}

describe('discovery hand-over', () => {
  it('gives a rank the same modules and problems as its own scan, from the hand-over', () => {
    const { app, tree } = install();
    const env = discoveryHandoverEnv([app]);
    expect(env[DISCOVERY_HANDOVER_ENV]).toBeDefined();
    const use = readDiscoveryHandover(env);
    const own = discoverModules({ searchFrom: [app] });
    const handed = discoverModules({ searchFrom: [app], packagesIn: use.packagesIn });
    expect(handed).toEqual(own);
    expect(handed.modules.map((m) => m.name)).toEqual(['alpha', 'beta']);
    expect(handed.problems.map((p) => p.kind)).toEqual(['bad-manifest']);
    expect(use.used).toContain(tree);
    expect(use.scanned.filter((s) => s.dir === tree)).toEqual([]);
    expect(describeHandoverUse(use)[0]).toMatch(/node_modules tree\(s\) from mpirun's hand-over/);
  });

  it('lists only module packages: a rank reads what the hand-over names, not the tree', () => {
    const { app, tree } = install();
    const env = discoveryHandoverEnv([app]);
    const handover = JSON.parse(env[DISCOVERY_HANDOVER_ENV]!);
    const mine = handover.trees.find((t: { dir: string }) => t.dir === tree);
    expect(mine.packages.map((p: string) => p.slice(tree.length + 1)).sort()).toEqual([
      '@x/rpi-beta',
      'broken',
      'ssi-rpi-alpha',
    ]);
    // Proof that the rank does not scan: a hand-over naming one package yields that one only.
    mine.packages = [join(tree, 'ssi-rpi-alpha')];
    const use = readDiscoveryHandover({ [DISCOVERY_HANDOVER_ENV]: JSON.stringify(handover) });
    expect(names({ searchFrom: [app], packagesIn: use.packagesIn })).toEqual(['alpha']);
  });

  it('scans a tree again when a package was added since (top level or in a scope)', () => {
    for (const where of ['top', 'scope'] as const) {
      const { app, tree } = install();
      const env = discoveryHandoverEnv([app]);
      const added = where === 'top' ? join(tree, 'ssi-rpi-new') : join(tree, '@x', 'rpi-new');
      writePackage(added, rpi('new', 'gamma'));
      touch(where === 'top' ? tree : join(tree, '@x'));
      const use = readDiscoveryHandover(env);
      expect(names({ searchFrom: [app], packagesIn: use.packagesIn })).toContain('gamma');
      expect(use.scanned).toContainEqual({ dir: tree, why: 'it changed since mpirun scanned it' });
      expect(describeHandoverUse(use).join('\n')).toContain(`scanned ${tree} here`);
    }
  });

  it('ignores a corrupt, foreign or mis-shaped hand-over whole, without an error', () => {
    const { app } = install();
    const good = JSON.parse(discoveryHandoverEnv([app])[DISCOVERY_HANDOVER_ENV]!);
    const cases: [string, RegExp][] = [
      ['{not json', /is not valid JSON/],
      [JSON.stringify({ ...good, format: 'other/9' }), /is not of format/],
      [JSON.stringify({ ...good, trees: [{ dir: 1 }] }), /has a bad shape/],
      [JSON.stringify({ ...good, trees: 'x' }), /has a bad shape/],
      [JSON.stringify(null), /is not of format/],
      [JSON.stringify({ ...good, host: `not-${hostname()}` }), /is from host not-/],
    ];
    for (const [raw, why] of cases) {
      const use = readDiscoveryHandover({ [DISCOVERY_HANDOVER_ENV]: raw });
      expect(use.ignored).toMatch(why);
      expect(use.packagesIn).toBeUndefined();
      expect(describeHandoverUse(use)[0]).toMatch(/hand-over ignored: .*; scanned here/);
      expect(names({ searchFrom: [app], packagesIn: use.packagesIn })).toEqual(['alpha', 'beta']);
    }
    expect(readDiscoveryHandover({})).toEqual({ used: [], scanned: [] });
  });

  it('is off, and every rank scans, when mpirun runs with SSI_DISCOVERY_HANDOVER=off', () => {
    const off = discoveryHandoverEnv(['/'], { [DISCOVERY_HANDOVER_ENV]: 'off' });
    expect(off).toEqual({ [DISCOVERY_HANDOVER_ENV]: 'off' });
    const use = readDiscoveryHandover(off);
    expect(use).toEqual({ used: [], scanned: [] });
    expect(describeHandoverUse(use)).toEqual([]);
  });

  it('still finds drop-ins and modules installed only where the rank runs', () => {
    const { app } = install();
    const env = discoveryHandoverEnv([app]);
    // A tree mpirun did not scan (the rank's own program directory) and a drop-in directory.
    const rankOnly = join(dirs[0]!, 'rank-side');
    writePackage(join(rankOnly, 'node_modules', 'ssi-rpi-local'), rpi('ssi-rpi-local', 'local'));
    const dropIns = join(dirs[0]!, 'drop-ins');
    writePackage(join(dropIns, 'my-rpi'), rpi('my-rpi', 'dropped'));
    const use = readDiscoveryHandover(env);
    const found = names({ searchFrom: [app, rankOnly], modulePath: [dropIns], ...use });
    expect(found).toEqual(['alpha', 'beta', 'dropped', 'local']);
    expect(use.scanned).toContainEqual({
      dir: join(rankOnly, 'node_modules'),
      why: 'not in the hand-over',
    });
  });
});
