import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Core from '@ssi/core';
import { FRAMEWORKS } from '@ssi/core';
import { afterAll, describe, expect, it } from 'vitest';
import { repo } from './workspace';

/**
 * A host with a newer framework API still runs the plugins installed for the older one (same
 * major, minor ≤ host: DESIGN §3), and a new major rejects them with a message that says what to
 * do. The host is a scratch copy of the built @ssi/core whose FRAMEWORKS table is edited; the
 * first-party plugins are found as drop-in packages under plugins/, exactly as built.
 */
const work = mkdtempSync(join(tmpdir(), 'ssi-api-bump-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const TYPES = ['boot', 'rpi', 'coll'] as const;
const FIRST_PARTY = { boot: ['rsh', 'slurm', 'tm'], rpi: ['tcp'], coll: ['lam_basic'] };

/** Today's API of `type` with its minor (or its major) raised. */
function bumped(type: (typeof TYPES)[number], part: 'minor' | 'major'): string {
  const [major, minor] = FRAMEWORKS[type].api.split('.').map(Number) as [number, number];
  return part === 'minor' ? `${major}.${minor + 7}.0` : `${major + 1}.0.0`;
}

/** A copy of @ssi/core whose boot, rpi and coll APIs have their minor (or major) raised. */
async function bumpedCore(part: 'minor' | 'major'): Promise<typeof Core> {
  const label = part;
  const dir = join(work, label);
  cpSync(join(repo, 'packages/core/dist'), join(dir, 'dist'), { recursive: true });
  cpSync(join(repo, 'packages/core/scripts'), join(dir, 'scripts'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }');
  // The code is in the start-up bundle; dist/index.js re-exports it (docs/architecture.md).
  const file = join(dir, 'dist/ssi-bundle.cjs');
  let code = readFileSync(file, 'utf8');
  for (const type of TYPES) {
    const today = new RegExp(`(\\b${type}: \\{ api: )"[^"]+"`);
    expect(code, `FRAMEWORKS.${type} in the built core`).toMatch(today);
    code = code.replace(today, `$1"${bumped(type, part)}"`);
  }
  writeFileSync(file, code);
  const core: typeof Core = await import(pathToFileURL(join(dir, 'dist/index.js')).href);
  for (const type of TYPES) expect(core.FRAMEWORKS[type].api).toBe(bumped(type, part));
  return core;
}

function frameworkOn(core: typeof Core, type: (typeof TYPES)[number]) {
  const discovery = core.discoverModules({ modulePath: [join(repo, 'plugins')] });
  const params = new core.ParamRegistry({
    env: {},
    paramFile: { path: '/nonexistent', found: false, values: new Map() },
  });
  const fw = new core.Framework(type, { params, discovery, write: () => {} });
  return { discovery, params, fw };
}

describe('a framework API bump in the host', () => {
  it('of the minor: installed plugins are discovered, imported, checked and opened', async () => {
    const core = await bumpedCore('minor');
    for (const type of TYPES) {
      const { discovery, params, fw } = frameworkOn(core, type);
      expect(discovery.problems).toEqual([]);
      const opened = await fw.open();
      const ours = opened.filter((o) => FIRST_PARTY[type].includes(o.record.name));
      expect(ours.map((o) => [o.record.name, o.available])).toEqual(
        FIRST_PARTY[type].map((name) => [name, true]),
      );
      for (const o of ours) {
        if (!o.available) continue;
        expect(core.formatVersion(o.record.typeApi)).toBe(o.module.typeApi);
        expect(o.module.typeApi).not.toBe(bumped(type, 'minor'));
        expect(params.isRegistered(`${type}_${o.record.name}_priority`)).toBe(true);
      }
      await fw.close();
    }
  });

  it('of the major: they are rejected, with what to install', async () => {
    const core = await bumpedCore('major');
    const next = bumped('rpi', 'major');
    const { discovery, fw } = frameworkOn(core, 'rpi');
    const tcp = discovery.modules.find((r) => r.type === 'rpi' && r.name === 'tcp');
    const message =
      'rpi module "tcp" @ssi/rpi-tcp@1.0.0 (module path: ' +
      `${join(repo, 'plugins/rpi-tcp')}) is written for rpi API ${FRAMEWORKS.rpi.api}, this ` +
      `@ssi/core provides ${next} (major must match, minor may not be newer); install a version ` +
      `of the module built for rpi API ${next.split('.')[0]}.x`;
    expect(tcp?.incompatible).toBe(message);
    const opened = await fw.open();
    expect(opened.find((o) => o.record.name === 'tcp')).toMatchObject({ available: false });
    await expect(core.loadModule(tcp!)).rejects.toThrow(message);
    await expect(fw.openByName('tcp')).rejects.toThrow(
      `rpi module "tcp" cannot run here: ${message}`,
    );
    for (const type of ['boot', 'coll'] as const) {
      for (const r of frameworkOn(core, type).discovery.modules.filter((m) => m.type === type)) {
        expect(r.incompatible).toContain(
          `this @ssi/core provides ${bumped(type, 'major')} (major must match`,
        );
      }
    }
    await fw.close();
  });
});
