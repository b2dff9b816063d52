import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SsiModule } from '@ssi/core';
import {
  FRAMEWORKS,
  type FrameworkType,
  frameworkApi,
  isApiCompatible,
  parseVersion,
} from '@ssi/core';
import { afterAll, describe, expect, it } from 'vitest';
import { repo, workspacePackages } from './workspace';

/**
 * One source of truth per framework: core's FRAMEWORKS. Each first-party plugin declares the
 * type-API version it was built for as a literal, the same in its manifest and its module object,
 * compatible with the host (same major, minor not newer); the framework packages' constants and
 * the scaffold's default are FRAMEWORKS' values. Needs `pnpm build` (it imports the built code).
 */
const importFile = (path: string) => import(pathToFileURL(path).href);
const modules = workspacePackages().flatMap((p) =>
  (p.json.ssi?.modules ?? []).map((m) => ({ pkg: p, m: m as typeof m & { typeApi: string } })),
);
const work = mkdtempSync(join(tmpdir(), 'ssi-type-api-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('type-API versions', () => {
  it('are checked on every first-party module (the workspace has the ones this test is about)', () => {
    expect(modules.map(({ m }) => `${m.type}/${m.name}`)).toEqual(
      expect.arrayContaining(['rpi/tcp', 'coll/lam_basic', 'boot/rsh', 'boot/tm', 'boot/slurm']),
    );
  });

  it.each(modules.map(({ pkg, m }) => [`${m.type}/${m.name}`, pkg, m] as const))(
    '%s: manifest and module object declare the same literal, compatible with the host',
    async (_name, pkg, m) => {
      const where = `${relative(repo, pkg.dir)}/package.json`;
      expect(Object.keys(FRAMEWORKS), `${where}: type`).toContain(m.type);
      const host = frameworkApi(m.type as FrameworkType);
      expect(isApiCompatible(parseVersion(m.typeApi), host), `${where}: typeApi`).toBe(true);
      const ns = await importFile(join(pkg.dir, m.entry));
      const object = (ns.default ?? ns.module) as SsiModule;
      expect({ type: object.type, name: object.name, typeApi: object.typeApi }).toEqual({
        type: m.type,
        name: m.name,
        typeApi: m.typeApi,
      });
      // A literal in the source, not the host's constant: an API bump must not change it.
      const sources = readdirSync(join(pkg.dir, 'src'), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts'))
        .map((f) => readFileSync(join(pkg.dir, 'src', f), 'utf8'));
      // One literal per module of the package (a cr component ships two halves).
      const declared = sources.flatMap((s) => [...s.matchAll(/\btypeApi:\s*([^,\n]+)/g)]);
      const expected = (pkg.json.ssi?.modules ?? []).map(
        (x) => `'${(x as { typeApi?: string }).typeApi}'`,
      );
      expect(declared.map((d) => d[1]).sort(), `${relative(repo, pkg.dir)}/src`).toEqual(
        expected.sort(),
      );
    },
  );

  it("the framework packages' constants are core's FRAMEWORKS values", async () => {
    const mpi = await importFile(join(repo, 'packages/mpi/dist/index.js'));
    const lam = await importFile(join(repo, 'packages/lam/dist/index.js'));
    expect({
      rpi: mpi.RPI_API_VERSION,
      coll: mpi.COLL_API_VERSION,
      boot: lam.BOOT_TYPE_API,
      crlam: mpi.CRLAM_API_VERSION,
      crmpi: mpi.CRMPI_API_VERSION,
    }).toEqual({
      rpi: FRAMEWORKS.rpi.api,
      coll: FRAMEWORKS.coll.api,
      boot: FRAMEWORKS.boot.api,
      crlam: FRAMEWORKS.crlam.api,
      crmpi: FRAMEWORKS.crmpi.api,
    });
  });

  it("create-ssi-plugin's default typeApi is FRAMEWORKS' for every type", async () => {
    const { createPlugin } = await importFile(join(repo, 'tools/create-ssi-plugin/dist/index.js'));
    for (const type of Object.keys(FRAMEWORKS) as FrameworkType[]) {
      const { dir } = createPlugin({ dir: join(work, type), type, name: 'probe' });
      const json = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      expect(json.ssi.modules[0].typeApi, type).toBe(FRAMEWORKS[type].api);
    }
  });
});
