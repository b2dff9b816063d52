import { readFileSync } from 'node:fs';
import { SsiError } from './errors';
import { SSI_API_VERSION } from './frameworks';
import type { Requirement } from './requirements';
import { parseRequirements } from './requirements';
import type { Version } from './version';
import { parseVersion } from './version';

/**
 * One module as its package's `"ssi"` field declares it: enough to list, version-check and
 * select the module without running any of its code.
 *
 *     "ssi": { "modules": [ { "type": "rpi", "name": "tcp", "typeApi": "1.1.0",
 *                             "entry": "./dist/index.js" } ] }
 */
export interface ManifestEntry {
  type: string;
  name: string;
  typeApi: Version;
  ssiApi: Version;
  /** Module version: the entry's own `version`, else the package's. */
  version: Version;
  /** Entry file, relative to the package directory. */
  entry: string;
  /** Modules this one needs (`"requires"`), checked before it is opened. */
  requires: Requirement[];
}

export interface PackageManifest {
  packageName: string;
  packageVersion: string;
  modules: ManifestEntry[];
}

const NAME_RE = /^[a-z][a-z0-9_]*$/;

/** Reads `package.json`; null when it has no `ssi` field (an ordinary package). */
export function readPackageManifest(packageJsonPath: string): PackageManifest | null {
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(readFileSync(packageJsonPath, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new SsiError(
      'BAD_MANIFEST',
      `${packageJsonPath}: not valid JSON (${(err as Error).message})`,
    );
  }
  if (pkg === null || typeof pkg !== 'object' || pkg.ssi === undefined) return null;
  return parseManifest(pkg, packageJsonPath);
}

export function parseManifest(pkg: Record<string, unknown>, where: string): PackageManifest {
  const bad = (what: string): never => {
    throw new SsiError('BAD_MANIFEST', `${where}: "ssi" field ${what}`);
  };
  const ssi = pkg.ssi as Record<string, unknown>;
  if (ssi === null || typeof ssi !== 'object' || Array.isArray(ssi)) bad('must be an object');
  if (!Array.isArray(ssi.modules) || ssi.modules.length === 0) {
    bad('needs "modules": a non-empty array of { type, name, typeApi, entry }');
  }
  const packageVersion = typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  const ssiApi = parseVersion(
    typeof ssi.ssiApi === 'string' ? ssi.ssiApi : SSI_API_VERSION,
    `${where}: ssi.ssiApi`,
  );
  const modules = (ssi.modules as unknown[]).map((raw, i): ManifestEntry => {
    const m = raw as Record<string, unknown>;
    const at = `modules[${i}]`;
    if (m === null || typeof m !== 'object') bad(`${at} must be an object`);
    for (const key of ['type', 'name', 'typeApi', 'entry']) {
      if (typeof m[key] !== 'string' || m[key] === '') bad(`${at} is missing string "${key}"`);
    }
    for (const key of ['type', 'name'] as const) {
      if (!NAME_RE.test(m[key] as string)) {
        bad(`${at}.${key} "${m[key]}" must be lower case letters, digits and "_"`);
      }
    }
    return {
      type: m.type as string,
      name: m.name as string,
      typeApi: parseVersion(m.typeApi as string, `${where}: ${at}.typeApi`),
      ssiApi,
      version: parseVersion(
        typeof m.version === 'string' ? m.version : packageVersion,
        `${where}: ${at} version`,
      ),
      entry: m.entry as string,
      requires: parseRequirements(m.requires, `${where}: ${at}`, (w) => bad(`${at}.${w}`)),
    };
  });
  return { packageName: String(pkg.name ?? '(unnamed)'), packageVersion, modules };
}
