import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defineModule, discoverModules } from '../src/index';
import { tempDir, writeModulePackage } from './fixtures';

describe('discovery', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  function project() {
    const t = tempDir();
    cleanup = t.cleanup;
    const app = join(t.dir, 'app');
    mkdirSync(join(app, 'src'), { recursive: true });
    return { root: t.dir, app, nm: join(app, 'node_modules') };
  }

  it('finds modules in node_modules (scoped and unscoped) from the app dir and its parents without running them', () => {
    const { root, app, nm } = project();
    const explode = "throw new Error('module code ran during discovery');";
    writeModulePackage(join(nm, '@ssi', 'rpi-tcp'), '@ssi/rpi-tcp', [
      { type: 'rpi', name: 'tcp', prelude: explode },
    ]);
    writeModulePackage(join(nm, 'ssi-coll-fancy'), 'ssi-coll-fancy', [
      { type: 'coll', name: 'fancy', prelude: explode },
    ]);
    writeModulePackage(join(root, 'node_modules', 'outer-boot'), 'outer-boot', [
      { type: 'boot', name: 'outer' },
    ]);
    mkdirSync(join(nm, 'not-a-module'));
    writeFileSync(join(nm, 'not-a-module', 'package.json'), '{"name":"not-a-module"}');

    const { modules, problems } = discoverModules({ searchFrom: [join(app, 'src')] });
    expect(problems).toEqual([]);
    expect(modules.map((m) => `${m.type}/${m.name}@${m.origin}`)).toEqual([
      'boot/outer@node_modules',
      'coll/fancy@node_modules',
      'rpi/tcp@node_modules',
    ]);
    expect(modules.find((m) => m.name === 'tcp')).toMatchObject({
      packageName: '@ssi/rpi-tcp',
      location: join(nm, '@ssi', 'rpi-tcp'),
    });
  });

  it('takes the first of each (type, name): static, then node_modules, then drop-in directories', () => {
    const { root, app, nm } = project();
    writeModulePackage(join(nm, 'tcp-a'), 'tcp-a', [{ type: 'rpi', name: 'tcp' }]);
    const dropIn = join(root, 'dropins');
    writeModulePackage(join(dropIn, 'tcp-b'), 'tcp-b', [{ type: 'rpi', name: 'tcp' }]);
    writeModulePackage(join(dropIn, 'only-here'), 'only-here', [{ type: 'rpi', name: 'sm' }]);
    const staticModule = defineModule({
      ssiApi: '1.0.0',
      type: 'rpi',
      typeApi: '1.1.0',
      name: 'sm',
      version: '9.0.0',
    });

    const { modules, problems } = discoverModules({
      staticModules: [staticModule],
      searchFrom: [app],
      modulePath: [dropIn],
    });
    expect(modules.map((m) => `${m.name}:${m.origin}`)).toEqual(['sm:static', 'tcp:node_modules']);
    expect(problems.map((p) => p.kind)).toEqual(['duplicate', 'duplicate']);
    expect(problems[1]!.message).toMatch(
      /two packages claim rpi module "tcp": tcp-a@1.2.3 \(node_modules: .*\) is used, tcp-b@1.2.3 \(module path: .*\) is ignored/,
    );
  });

  it('counts one package reached through two paths (a symlink) once, silently', () => {
    const { root, app, nm } = project();
    const real = writeModulePackage(join(root, 'store', 'tcp'), '@ssi/rpi-tcp', [
      { type: 'rpi', name: 'tcp' },
    ]);
    mkdirSync(join(nm, '@ssi'), { recursive: true });
    symlinkSync(real, join(nm, '@ssi', 'rpi-tcp'));
    const { modules, problems } = discoverModules({
      searchFrom: [app],
      modulePath: [join(root, 'store')],
    });
    expect(modules).toHaveLength(1);
    expect(problems).toEqual([]);
  });

  it('reports malformed manifests and missing entry files and keeps going', () => {
    const { app, nm } = project();
    mkdirSync(join(nm, 'broken-json'), { recursive: true });
    writeFileSync(join(nm, 'broken-json', 'package.json'), '{ "name": "broken-json", ');
    mkdirSync(join(nm, 'bad-ssi'), { recursive: true });
    writeFileSync(
      join(nm, 'bad-ssi', 'package.json'),
      JSON.stringify({ name: 'bad-ssi', ssi: { modules: [{ type: 'rpi' }] } }),
    );
    mkdirSync(join(nm, 'bad-name'), { recursive: true });
    writeFileSync(
      join(nm, 'bad-name', 'package.json'),
      JSON.stringify({
        name: 'bad-name',
        ssi: { modules: [{ type: 'rpi', name: 'My-TCP', typeApi: '1.1.0', entry: 'x.js' }] },
      }),
    );
    writeModulePackage(join(nm, 'unbuilt'), 'unbuilt', [
      { type: 'rpi', name: 'unbuilt', entry: './dist/index.js' },
    ]);
    writeModulePackage(join(nm, 'good'), 'good', [{ type: 'rpi', name: 'good' }]);

    const { modules, problems } = discoverModules({ searchFrom: [app] });
    expect(modules.map((m) => m.name)).toEqual(['good']);
    const messages = problems.map((p) => p.message).join('\n');
    expect(messages).toMatch(/broken-json\/package.json: not valid JSON/);
    expect(messages).toMatch(
      /bad-ssi\/package.json: "ssi" field modules\[0\] is missing string "name"/,
    );
    expect(messages).toMatch(/modules\[0\].name "My-TCP" must be lower case/);
    expect(messages).toMatch(
      /unbuilt \(.*\) declares rpi module "unbuilt" with entry .\/dist\/index.js, but that file does not exist; was the package built\?/,
    );
  });

  it('marks modules of another framework API major, a newer minor or an unknown type as unusable, saying why', () => {
    const { app, nm } = project();
    writeModulePackage(join(nm, 'future'), 'future', [
      { type: 'coll', name: 'future', typeApi: '2.0.0' },
    ]);
    writeModulePackage(join(nm, 'newer'), 'newer', [
      { type: 'coll', name: 'newer', typeApi: '1.9.0' },
    ]);
    writeModulePackage(join(nm, 'older'), 'older', [
      { type: 'coll', name: 'older', typeApi: '1.0.0' },
    ]);
    writeModulePackage(join(nm, 'weird'), 'weird', [{ type: 'gpu', name: 'weird' }]);
    const { modules } = discoverModules({ searchFrom: [app] });
    const byName = Object.fromEntries(modules.map((m) => [m.name, m.incompatible]));
    expect(byName.older).toBeUndefined();
    expect(byName.future).toMatch(
      /coll module "future" future@1.2.3 \(node_modules: .*\/future\) is written for coll API 2.0.0, this @ssi\/core provides 1.2.0 \(major must match/,
    );
    expect(byName.newer).toMatch(/written for coll API 1.9.0/);
    expect(byName.weird).toBe('unknown framework type "gpu"');
  });

  it('lists the two halves of a cr component shipped in one package', () => {
    const { app, nm } = project();
    writeModulePackage(join(nm, 'cr-self'), '@ssi/cr-self', [
      { type: 'crlam', name: 'self', typeApi: '1.0.0' },
      { type: 'crmpi', name: 'self', typeApi: '1.0.0' },
    ]);
    const { modules } = discoverModules({ searchFrom: [app] });
    expect(modules.map((m) => `${m.type}/${m.name}`)).toEqual(['crlam/self', 'crmpi/self']);
  });
});
