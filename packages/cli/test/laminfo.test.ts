import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { FRAMEWORKS, type FrameworkType } from '@ssi/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const laminfoBin = resolve(import.meta.dirname, '../dist/bin/laminfo.js');
const work = mkdtempSync(join(tmpdir(), 'ssi-laminfo-'));
const app = join(work, 'app');
const dropIns = join(work, 'dropins');

interface Fixture {
  type: string;
  name: string;
  typeApi?: string;
  open?: string;
}

/** A module package whose module has `short` (int) and `mode` (string) parameters. */
function modulePackage(dir: string, pkgName: string, m: Fixture, entry = './index.js') {
  mkdirSync(dir, { recursive: true });
  const typeApi = m.typeApi ?? FRAMEWORKS[m.type as FrameworkType].api;
  const ssi = { modules: [{ type: m.type, name: m.name, typeApi, entry }] };
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: pkgName, version: '2.3.4', type: 'module', ssi }),
  );
  writeFileSync(
    join(dir, 'index.js'),
    `export default { ssiApi: '1.0.0', type: '${m.type}', typeApi: '${typeApi}', name: '${m.name}', version: '2.3.4',
      params: { short: { type: 'int', default: 65536, help: 'eager limit in bytes' },
                mode: { type: 'string', default: 'fast', help: 'how to go' } },
      open() { ${m.open ?? ''} } };`,
  );
}

function laminfo(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [laminfoBin, ...args], {
    cwd: app,
    encoding: 'utf8',
    timeout: 30_000,
    env: { PATH: process.env.PATH ?? '', HOME: work, SSI_MODULE_PATH: dropIns, ...env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  const nm = join(app, 'node_modules');
  modulePackage(join(nm, '@ssi', 'rpi-tcp'), '@ssi/rpi-tcp', { type: 'rpi', name: 'tcp' });
  modulePackage(join(nm, 'ssi-rpi-picky'), 'ssi-rpi-picky', {
    type: 'rpi',
    name: 'picky',
    open: "return 'no picky hardware';",
  });
  modulePackage(join(nm, 'ssi-rpi-future'), 'ssi-rpi-future', {
    type: 'rpi',
    name: 'future',
    typeApi: '9.0.0',
  });
  modulePackage(
    join(nm, 'ssi-rpi-unbuilt'),
    'ssi-rpi-unbuilt',
    { type: 'rpi', name: 'unbuilt' },
    './dist/index.js',
  );
  modulePackage(join(nm, 'tcp-clone'), 'tcp-clone', { type: 'rpi', name: 'tcp' });
  mkdirSync(join(nm, 'broken'), { recursive: true });
  writeFileSync(join(nm, 'broken', 'package.json'), '{"name":"broken","ssi":{"modules":"yes"}}');
  // 20 modules in all, for the listing-speed measurement in the closing note.
  for (let i = 0; i < 15; i++) {
    modulePackage(join(nm, `ssi-coll-c${i}`), `ssi-coll-c${i}`, { type: 'coll', name: `c${i}` });
  }
  modulePackage(join(dropIns, 'boot-here'), 'boot-here', { type: 'boot', name: 'here' });
  modulePackage(join(dropIns, 'cr-pair'), 'cr-pair', { type: 'crmpi', name: 'pair' });
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('laminfo', () => {
  it('lists every module with its versions and where it was found, and warns about broken packages', () => {
    const r = laminfo([]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /SSI rpi: tcp \(SSI v1\.0\.0, API v2\.0\.0, Module v2\.3\.4\) \[node_modules: .*\/@ssi\/rpi-tcp\]/,
    );
    expect(r.stdout).toMatch(/SSI boot: here \(.*\) \[module path: .*dropins\/boot-here\]/);
    expect(r.stdout).toMatch(/SSI rpi: future .*\n\s+UNUSABLE: .*written for rpi API 9\.0\.0/);
    // Modules installed in this repository are visible from the CLI's own install too: count ours.
    const ours = r.stdout.split('\n').filter((l) => /^\s+SSI \w+: /.test(l) && l.includes(work));
    expect(ours).toHaveLength(20);
    expect(r.stderr).toMatch(/warning: .*broken\/package.json: "ssi" field needs "modules"/);
    expect(r.stderr).toMatch(
      /warning: ssi-rpi-unbuilt .* entry \.\/dist\/index\.js, but that file does not exist/,
    );
    expect(r.stderr).toMatch(
      /warning: two packages claim rpi module "tcp": @ssi\/rpi-tcp@2\.3\.4 .* is used, tcp-clone@2\.3\.4 .* is ignored/,
    );
  });

  it('shows each parameter with default, current value and the source of that value', () => {
    const paramFile = join(work, 'params.conf');
    writeFileSync(paramFile, 'rpi_tcp_priority = 33\n');
    const r = laminfo(['--ssi', 'rpi_tcp_short', '1024', '--param', 'rpi', 'tcp'], {
      LAM_MPI_SSI_rpi_tcp_mode: 'careful',
      SSI_PARAM_FILE: paramFile,
    });
    expect(r.stderr).toMatch(/^(warning: .*\n)*$/);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'SSI rpi: parameter "rpi_tcp_short" (int, default: "65536", value: "1024", source: command line, --ssi)',
    );
    expect(r.stdout).toContain(
      'parameter "rpi_tcp_mode" (string, default: "fast", value: "careful", source: environment, LAM_MPI_SSI_rpi_tcp_mode)',
    );
    expect(r.stdout).toContain(
      `parameter "rpi_tcp_priority" (int, default: "0", value: "33", source: parameter file, ${paramFile}:1)`,
    );
    expect(r.stdout).toContain('eager limit in bytes');
  });

  it('lists framework and module parameters with --param all all, noting modules that would not run', () => {
    const r = laminfo(['--param', 'all', 'all']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('parameter "ssi_base_module_path"');
    expect(r.stdout).toContain('parameter "rpi_verbose"');
    expect(r.stdout).toContain('parameter "coll_c14_short"');
    expect(r.stdout).toContain('SSI rpi: module picky: would not run here: no picky hardware');
    expect(r.stdout).toContain('parameter "rpi_picky_short"');
  });

  it('prints versions of one framework in the style of Fig. 3.2, and JSON for scripts', () => {
    const full = laminfo(['--version', 'rpi', 'full']).stdout;
    expect(full).toMatch(/^\s+SSI rpi: picky \(SSI v1\.0\.0, API v2\.0\.0, Module v2\.3\.4\)/m);
    expect(full).not.toContain('SSI coll');
    expect(laminfo(['--version', 'rpi']).stdout).toMatch(
      /SSI rpi: tcp \(SSI v1\.0, API v2\.0, Module v2\.3\)/,
    );
    const json = JSON.parse(laminfo(['--json']).stdout);
    const ours = json.modules.filter((m: { location: string }) => m.location.startsWith(work));
    expect(ours).toHaveLength(20);
    // The repository's own rpi-tcp is visible from the CLI's install too: only our problems count.
    const repoRoot = resolve(import.meta.dirname, '../../..');
    const ourProblems = json.problems.filter(
      (p: { message: string }) => !p.message.includes(`${repoRoot}/plugins/`),
    );
    expect(ourProblems.map((p: { kind: string }) => p.kind).sort()).toEqual([
      'bad-manifest',
      'duplicate',
      'missing-entry',
    ]);
  });

  it('warns about an unknown --ssi name and suggests the closest known one', () => {
    const r = laminfo(['--ssi', 'rpi_tcp_shrot', '5', '--param', 'rpi', 'tcp']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      'warning: unknown SSI parameter "rpi_tcp_shrot" from the command line (--ssi); did you mean "rpi_tcp_short"?',
    );
  });

  it.each([
    [['--ssi', 'rpi'], 'laminfo: --ssi rpi is missing its value: --ssi rpi <value>'],
    [
      ['--ssi', 'rpi_tcp_short', '64k', '--param', 'rpi', 'tcp'],
      'laminfo: parameter rpi_tcp_short expects an integer, but the command line (--ssi) gives "64k"',
    ],
    [
      ['--param', 'gpu', 'all'],
      'laminfo: unknown framework type "gpu"; expected one of: all, boot, crlam, rpi, coll, crmpi',
    ],
    [
      ['--param', 'rpi', 'nosuch'],
      'laminfo: no rpi module named "nosuch" is installed; installed: rpi/crtcp, rpi/future, rpi/picky, rpi/sm, rpi/tcp',
    ],
    [
      ['--param', 'rpi'],
      'laminfo: --param needs a type and a module: --param rpi tcp, --param all all',
    ],
    [['--bogus'], 'laminfo: unknown argument "--bogus"'],
  ])('fails clearly on %j', (args, message) => {
    const r = laminfo(args);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('fails clearly on a parameter file it cannot read', () => {
    const r = laminfo([], { SSI_PARAM_FILE: join(work, 'missing.conf') });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `laminfo: parameter file ${join(work, 'missing.conf')} does not exist; fix it or unset SSI_PARAM_FILE\n`,
    );
  });
});
