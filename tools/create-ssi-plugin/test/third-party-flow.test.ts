import { spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { FRAMEWORKS } from '@ssi/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlugin } from '../src/index';

/** A version as a regular expression (dots literal). */
const re = (v: string) => v.replace(/\./g, '\\.');
/** The rpi API's next major: what no installed core provides. */
const NEXT_RPI_MAJOR = `${Number(FRAMEWORKS.rpi.api.split('.')[0]) + 1}.0.0`;

/**
 * The point of the whole design: a module written by a third party, outside this repository,
 * packed and installed next to @ssi/cli, is found by name. Everything here goes through real
 * `pnpm pack` tarballs and a fresh project, as a user would.
 */
const repo = resolve(import.meta.dirname, '../../..');
const work = mkdtempSync(join(tmpdir(), 'ssi-third-party-'));

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, ...env },
  });
  if (r.error)
    throw new Error(`${cmd} ${args.join(' ')} failed to run in ${cwd}: ${r.error.message}`);
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function mustRun(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const r = run(cmd, args, cwd, env);
  if (r.code !== 0)
    throw new Error(
      `${cmd} ${args.join(' ')} exited ${r.code} in ${cwd}:\n${r.stdout}\n${r.stderr}`,
    );
  return r;
}

function pack(dir: string): string {
  const out = join(work, 'tarballs');
  mkdirSync(out, { recursive: true });
  const before = new Set(readdirSync(out));
  mustRun('pnpm', ['pack', '--pack-destination', out], dir);
  const tarball = readdirSync(out).find((f) => !before.has(f));
  if (!tarball) throw new Error(`pnpm pack in ${dir} produced no tarball`);
  return join(out, tarball);
}

/**
 * A fresh project depending on the packed @ssi/cli and the packed framework packages it needs
 * (@ssi/core, @ssi/lam, ...: none of them is on the registry) plus `extra`.
 */
function freshProject(name: string, extra: Record<string, string>): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  const ours = Object.fromEntries(
    Object.entries(tarballs).map(([pkg, file]) => [pkg, `file:${file}`]),
  );
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({
      name,
      private: true,
      // @ssi/core directly too: it satisfies the plugins' peerDependency without a registry.
      dependencies: { ...ours, ...extra },
      pnpm: { overrides: ours },
    }),
  );
  mustRun('pnpm', ['install', '--prefer-offline', '--config.auto-install-peers=false'], dir);
  return dir;
}

const laminfo = (project: string, args: string[], env: Record<string, string> = {}) =>
  run(join(project, 'node_modules', '.bin', 'laminfo'), args, project, env);

/** Tarballs by package name: @ssi/cli and every workspace package it depends on. */
const tarballs: Record<string, string> = {};

/** The workspace packages @ssi/cli depends on, transitively, with their directories. */
function cliAndItsWorkspaceDeps(): Map<string, string> {
  const dirs = new Map<string, string>();
  const visit = (name: string) => {
    if (dirs.has(name)) return;
    const dir = join(repo, 'packages', name.replace('@ssi/', ''));
    dirs.set(name, dir);
    const json = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    for (const [dep, spec] of Object.entries<string>(json.dependencies ?? {})) {
      if (spec.startsWith('workspace:')) visit(dep);
    }
  };
  visit('@ssi/cli');
  return dirs;
}

beforeAll(() => {
  for (const [name, dir] of cliAndItsWorkspaceDeps()) tarballs[name] = pack(dir);
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('a third-party plugin', () => {
  it('is found by name, with its parameters, once its tarball is installed next to @ssi/cli', () => {
    const { dir } = createPlugin({
      dir: join(work, 'src', 'foo'),
      type: 'rpi',
      name: 'foo',
      packageName: 'acme-rpi-foo',
    });
    const project = freshProject('app', { 'acme-rpi-foo': `file:${pack(dir)}` });

    const list = laminfo(project, []);
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(
      new RegExp(
        `SSI rpi: foo \\(SSI v1\\.0\\.0, API v${re(FRAMEWORKS.rpi.api)}, Module v0\\.1\\.0\\) \\[node_modules: .*acme-rpi-foo\\]`,
      ),
    );

    const params = laminfo(project, ['--param', 'rpi', 'foo', '--ssi', 'rpi_foo_short', '4096'], {
      LAM_MPI_SSI_rpi_foo_priority: '42',
    });
    expect(params.code).toBe(0);
    expect(params.stdout).toContain(
      'parameter "rpi_foo_short" (int, default: "65536", value: "4096", source: command line, --ssi)',
    );
    expect(params.stdout).toContain(
      'parameter "rpi_foo_priority" (int, default: "10", value: "42", source: environment, LAM_MPI_SSI_rpi_foo_priority)',
    );

    const json = JSON.parse(laminfo(project, ['--json']).stdout);
    expect(json.modules).toContainEqual(
      expect.objectContaining({
        type: 'rpi',
        name: 'foo',
        packageName: 'acme-rpi-foo',
        usable: true,
      }),
    );
  });

  it('built for an incompatible framework API major is listed as unusable with a clear reason', () => {
    const { dir } = createPlugin({
      dir: join(work, 'src', 'bar'),
      type: 'rpi',
      name: 'bar',
      packageName: 'acme-rpi-bar',
      typeApi: NEXT_RPI_MAJOR,
    });
    const project = freshProject('app-incompatible', { 'acme-rpi-bar': `file:${pack(dir)}` });

    const list = laminfo(project, []);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(
      new RegExp(
        `SSI rpi: bar .*\\n\\s+UNUSABLE: rpi module "bar" acme-rpi-bar@0\\.1\\.0 \\(node_modules: .*\\) is written for rpi API ${re(NEXT_RPI_MAJOR)}, this @ssi/core provides ${re(FRAMEWORKS.rpi.api)}`,
      ),
    );

    const params = laminfo(project, ['--param', 'rpi', 'bar']);
    expect(params.stdout).toMatch(
      new RegExp(`module bar: rpi module "bar" .* is written for rpi API ${re(NEXT_RPI_MAJOR)}`),
    );
  });

  it('dropped into a directory on SSI_MODULE_PATH is found too', () => {
    const { dir } = createPlugin({
      dir: join(work, 'src', 'baz'),
      type: 'coll',
      name: 'baz',
      packageName: 'acme-coll-baz',
    });
    const dropIns = join(work, 'dropins');
    cpSync(dir, join(dropIns, 'acme-coll-baz'), { recursive: true });
    const project = freshProject('app-plain', {});

    expect(laminfo(project, []).stdout).not.toContain('baz');
    const list = laminfo(project, [], { SSI_MODULE_PATH: dropIns });
    expect(list.stdout).toMatch(
      new RegExp(
        `SSI coll: baz \\(SSI v1\\.0\\.0, API v${re(FRAMEWORKS.coll.api)}, Module v0\\.1\\.0\\) \\[module path: .*dropins/acme-coll-baz\\]`,
      ),
    );
    const viaParam = laminfo(project, [
      '--ssi',
      'ssi_base_module_path',
      dropIns,
      '--param',
      'coll',
      'baz',
    ]);
    expect(viaParam.stdout).toContain('parameter "coll_baz_example"');
  });
});
