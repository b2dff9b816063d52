import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FRAMEWORKS, isFrameworkType } from '../src/frameworks';

export interface FixtureModule {
  type: string;
  name: string;
  typeApi?: string;
  version?: string;
  /** Extra source appended inside the module object literal. */
  body?: string;
  /** Source placed before the module object (e.g. a throw to prove code is not imported). */
  prelude?: string;
  /** Manifest entry override (e.g. to point at a missing file). */
  entry?: string;
  /** `requires`, written into the manifest and the module object alike (`body` may override). */
  requires?: unknown;
}

/** Writes a package directory with an `ssi` manifest and a plain-JS entry. */
export function writeModulePackage(
  dir: string,
  packageName: string,
  modules: FixtureModule[],
): string {
  mkdirSync(dir, { recursive: true });
  const manifest = modules.map((m) => ({
    type: m.type,
    name: m.name,
    typeApi: m.typeApi ?? hostApi(m.type),
    entry: m.entry ?? `./${m.type}-${m.name}.js`,
    requires: m.requires,
  }));
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({
      name: packageName,
      version: modules[0]?.version ?? '1.2.3',
      type: 'module',
      ssi: { modules: manifest },
    }),
  );
  for (const m of modules) {
    if (m.entry) continue;
    writeFileSync(
      join(dir, `${m.type}-${m.name}.js`),
      `${m.prelude ?? ''}
export default {
  ssiApi: '1.0.0', type: '${m.type}', typeApi: '${m.typeApi ?? hostApi(m.type)}', name: '${m.name}', version: '${m.version ?? '1.2.3'}',
  requires: ${JSON.stringify(m.requires)},
  ${m.body ?? ''}
};
`,
    );
  }
  return dir;
}

export function tempDir(prefix = 'ssi-core-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The API this core's framework `type` implements: what a fixture module is written for. */
function hostApi(type: string): string {
  return isFrameworkType(type) ? FRAMEWORKS[type].api : '1.1.0';
}
