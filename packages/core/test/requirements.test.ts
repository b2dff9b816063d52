import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SsiModule } from '../src/index';
import { discoverModules, Framework, ParamRegistry, parseManifest } from '../src/index';
import type { FixtureModule } from './fixtures';
import { tempDir, writeModulePackage } from './fixtures';

/**
 * A module names the modules it builds on (`requires` in its manifest); the framework opens those
 * of its own type by name before it, keeps them open, and explains what is missing.
 */
const noFile = { path: '/nonexistent', found: false, values: new Map() };
const TCP_1_0 = [{ type: 'rpi', name: 'tcp', version: '1.0', package: '@ssi/rpi-tcp' }];

let cleanup = () => {};
afterEach(() => cleanup());

/** A module of the fixture: `open` is code run in its open (e.g. a `return 'reason'`). */
type Mod = Omit<FixtureModule, 'prelude'> & { open?: string };

/** Drop-in packages, one per module, whose open/close append to a log; and a framework on them. */
function setup(modules: Mod[], commandLine: Record<string, string> = {}) {
  const t = tempDir();
  cleanup = t.cleanup;
  const log = join(t.dir, 'log.txt');
  for (const m of modules) {
    writeModulePackage(join(t.dir, 'drop', m.name), `pkg-${m.name}`, [
      {
        ...m,
        prelude: "import { appendFileSync } from 'node:fs';",
        body: `
          params: { knob: { type: 'int', default: 7, help: 'a knob' } },
          open() { appendFileSync(${JSON.stringify(log)}, 'open ${m.name}\\n'); ${m.open ?? ''} },
          close() { appendFileSync(${JSON.stringify(log)}, 'close ${m.name}\\n'); },
          query() { return { priority: 10 }; },
          ${m.body ?? ''}`,
      },
    ]);
  }
  const discovery = discoverModules({ modulePath: [join(t.dir, 'drop')] });
  const params = new ParamRegistry({ commandLine, env: {}, paramFile: noFile });
  const fw = new Framework<SsiModule & { query(): { priority: number } }>('rpi', {
    params,
    discovery,
    write: () => {},
  });
  const events = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []);
  return { fw, params, discovery, events };
}

const reasons = (opened: { record: { name: string }; available: boolean; reason?: string }[]) =>
  Object.fromEntries(opened.map((o) => [o.record.name, o.available ? 'available' : o.reason]));

describe('manifest "requires"', () => {
  const entry = (requires: unknown) => ({
    name: 'crtcp-pkg',
    version: '1.0.0',
    ssi: { modules: [{ type: 'rpi', name: 'crtcp', typeApi: '2.0.0', entry: 'x.js', requires }] },
  });

  it('is read without running code: type, name, version (same major, minor at least)', () => {
    const [m] = parseManifest(entry(TCP_1_0), 'p.json').modules;
    expect(m!.requires).toEqual([
      {
        type: 'rpi',
        name: 'tcp',
        version: { major: 1, minor: 0, release: 0 },
        package: '@ssi/rpi-tcp',
      },
    ]);
    expect(parseManifest(entry(undefined), 'p.json').modules[0]!.requires).toEqual([]);
  });

  it('rejects bad shapes with what was wrong and what was expected', () => {
    const bad = (requires: unknown) => () => parseManifest(entry(requires), 'p.json');
    expect(bad({ type: 'rpi' })).toThrow(
      'p.json: "ssi" field modules[0].requires must be an array of { type, name, version }',
    );
    expect(bad([{ type: 'rpi', name: 'tcp' }])).toThrow(
      'p.json: "ssi" field modules[0].requires[0] is missing string "version"',
    );
    expect(bad([null])).toThrow('modules[0].requires[0] is missing string "type"');
    expect(bad([{ type: 'net', name: 'tcp', version: '1.0' }])).toThrow(
      'modules[0].requires[0].type "net" is not one of boot, crlam, rpi, coll, crmpi',
    );
    expect(bad([{ type: 'rpi', name: 'tcp', version: 'one' }])).toThrow(
      'p.json: modules[0].requires[0].version "one" is not a version; expected major.minor',
    );
    expect(bad([{ type: 'rpi', name: 'tcp', version: '1.0', package: 3 }])).toThrow(
      'modules[0].requires[0].package is not a string',
    );
  });
});

describe('a module that requires another of its framework', () => {
  it('gets it opened by name, with its parameters, though the selector names only itself', async () => {
    const { fw, params, events } = setup(
      [
        { type: 'rpi', name: 'crtcp', requires: TCP_1_0 },
        { type: 'rpi', name: 'tcp', version: '1.3.0' },
        { type: 'rpi', name: 'sm' },
      ],
      { rpi: 'crtcp', rpi_tcp_knob: '9' },
    );
    expect(reasons(await fw.open())).toEqual({ crtcp: 'available' });
    expect(params.lookup('rpi_tcp_knob')).toMatchObject({ value: 9, source: 'command line' });
    expect(params.isRegistered('rpi_tcp_priority')).toBe(true);
    expect(params.isRegistered('rpi_sm_knob')).toBe(false);
    expect((await fw.select((m) => m.query())).name).toBe('crtcp');
    // tcp is no candidate: the selection names only crtcp; closeAllBut keeps what crtcp needs.
    await fw.closeAllBut(['crtcp']);
    expect(events()).toEqual(['open tcp', 'open crtcp']);
    expect((await fw.openByName('tcp')).name).toBe('tcp');
    await fw.close();
    expect(events()).toEqual(['open tcp', 'open crtcp', 'close crtcp', 'close tcp']);
  });

  it('is kept open when both are candidates and the framework keeps only the dependent', async () => {
    const { fw, events } = setup([
      { type: 'rpi', name: 'crtcp', requires: TCP_1_0 },
      { type: 'rpi', name: 'tcp' },
      { type: 'rpi', name: 'sm' },
    ]);
    await fw.open();
    await fw.closeAllBut(['crtcp']);
    expect(events()).toEqual(['open tcp', 'open crtcp', 'open sm', 'close sm']);
    await fw.close();
    expect(events().slice(4)).toEqual(['close crtcp', 'close tcp']);
  });

  it('is unavailable, without running its code, when the required module is not installed', async () => {
    const { fw, events } = setup(
      [
        { type: 'rpi', name: 'crtcp', requires: TCP_1_0 },
        { type: 'rpi', name: 'sm' },
      ],
      { rpi: 'crtcp' },
    );
    const opened = await fw.open();
    expect(reasons(opened).crtcp).toMatch(
      /^rpi module crtcp pkg-crtcp@1\.2\.3 \(module path: .*\) needs rpi module tcp 1\.x \(≥ 1\.0\), which is not installed: npm install @ssi\/rpi-tcp@\^1\.0$/,
    );
    expect(events()).toEqual([]);
    await expect(fw.select((m) => m.query())).rejects.toThrow(
      /no rpi module can run here \(--ssi rpi crtcp\)\.\nInstalled rpi modules:\n {2}crtcp: declined: rpi module crtcp .* needs rpi module tcp 1\.x \(≥ 1\.0\), which is not installed/,
    );
  });

  it('names both versions and where each came from when the installed one does not fit', async () => {
    for (const installed of ['2.0.0', '1.0.9']) {
      const needs = installed === '2.0.0' ? '1.0' : '1.1';
      const { fw } = setup([
        { type: 'rpi', name: 'crtcp', requires: [{ type: 'rpi', name: 'tcp', version: needs }] },
        { type: 'rpi', name: 'tcp', version: installed },
      ]);
      const opened = reasons(await fw.open());
      expect(opened.crtcp).toMatch(
        new RegExp(
          `^rpi module crtcp pkg-crtcp@1\\.2\\.3 \\(module path: .*/drop/crtcp\\) needs rpi module tcp 1\\.x \\(≥ ${needs}\\), but tcp ${installed} is installed, pkg-tcp@${installed} \\(module path: .*/drop/tcp\\): install a package that provides it`,
        ),
      );
      expect(opened.tcp).toBe('available');
      await fw.close();
      cleanup();
    }
  });

  it('is unavailable when the required module declines to run here, with its reason', async () => {
    const { fw } = setup(
      [
        { type: 'rpi', name: 'crtcp', requires: TCP_1_0 },
        { type: 'rpi', name: 'tcp', open: "return 'no network';" },
      ],
      { rpi: 'crtcp' },
    );
    expect(reasons(await fw.open()).crtcp).toMatch(
      /needs rpi module tcp 1\.x \(≥ 1\.0\), which cannot run here: no network$/,
    );
    await fw.close();
  });

  it('reports modules that require each other instead of waiting forever', async () => {
    const { fw } = setup([
      { type: 'rpi', name: 'a', requires: [{ type: 'rpi', name: 'b', version: '1.0' }] },
      { type: 'rpi', name: 'b', requires: [{ type: 'rpi', name: 'a', version: '1.0' }] },
    ]);
    const r = reasons(await fw.open());
    expect(r.b).toBe('rpi modules require each other: a → b → a');
    expect(r.a).toMatch(/needs rpi module b 1\.x \(≥ 1\.0\), which cannot run here: rpi modules/);
    await fw.close();
  });

  it('of another framework is checked against what is installed, not opened', async () => {
    const { fw, events } = setup([
      { type: 'rpi', name: 'x', requires: [{ type: 'coll', name: 'smp', version: '1.0' }] },
      { type: 'rpi', name: 'y', requires: [{ type: 'rpi', name: 'x', version: '1.0' }] },
    ]);
    const r = reasons(await fw.open());
    expect(r.x).toMatch(/needs coll module smp 1\.x \(≥ 1\.0\), which is not installed/);
    expect(r.y).toMatch(/needs rpi module x 1\.x \(≥ 1\.0\), which cannot run here: rpi module x/);
    expect(events()).toEqual([]);
  });

  it('must declare the same requirements in its module object as in its manifest', async () => {
    const { fw } = setup([
      { type: 'rpi', name: 'crtcp', requires: TCP_1_0, body: 'requires: [],' },
      { type: 'rpi', name: 'tcp' },
    ]);
    await expect(fw.open()).rejects.toThrow(
      /rpi module "crtcp" \(.*\): manifest requires rpi module tcp 1\.x \(≥ 1\.0\) but the module object requires nothing; rebuild the package/,
    );
    await fw.close();
  });
});

describe('openByName', () => {
  it('opens a module the selector leaves out, keeps it through closeAllBut, closes it last', async () => {
    const { fw, params, events } = setup(
      [
        { type: 'rpi', name: 'tcp' },
        { type: 'rpi', name: 'lam_basic' },
      ],
      { rpi: 'tcp' },
    );
    await fw.open();
    const basic = await fw.openByName('lam_basic');
    expect(basic.name).toBe('lam_basic');
    expect(await fw.openByName('lam_basic')).toBe(basic);
    expect(params.get('rpi_lam_basic_knob')).toBe(7);
    expect(fw.candidates().find((c) => c.name === 'lam_basic')?.module).toBeUndefined();
    await fw.closeAllBut([]);
    expect(events()).toEqual(['open tcp', 'open lam_basic', 'close tcp']);
    await fw.close();
    expect(events()).toEqual(['open tcp', 'open lam_basic', 'close tcp', 'close lam_basic']);
  });

  it('says what is installed when the module is not, and why it cannot run when it declines', async () => {
    const { fw } = setup([
      { type: 'rpi', name: 'tcp' },
      { type: 'rpi', name: 'sm', open: "return 'no shared memory';" },
    ]);
    await expect(fw.openByName('crtcp')).rejects.toThrow(
      'rpi module "crtcp" is not installed (installed: sm, tcp)',
    );
    await expect(fw.openByName('sm')).rejects.toThrow(
      'rpi module "sm" cannot run here: no shared memory',
    );
    expect(await fw.openFallback('crtcp')).toBeUndefined();
    expect(await fw.openFallback('sm')).toBeUndefined();
    expect((await fw.openFallback('tcp'))?.name).toBe('tcp');
    await fw.close();
  });
});
