import type { ModuleRecord } from './discovery';
import { describeRecord } from './discovery';
import { FRAMEWORKS, isFrameworkType } from './frameworks';
import type { Version } from './version';
import { formatVersion, isApiCompatible, parseVersion } from './version';

/**
 * A module another module needs: `{ "type": "rpi", "name": "tcp", "version": "1.0" }` in a
 * manifest entry's `requires` means tcp 1.x with x ≥ 0 (same major, minor not older; the release
 * is ignored, as everywhere in SSI). `package` tells the user what to install when it is missing.
 */
export interface Requirement {
  type: string;
  name: string;
  version: Version;
  package?: string;
}

type RawRequirement = Record<'type' | 'name' | 'version' | 'package', string>;

/** Validates a `requires` list of `where` (a manifest entry, a module object) without running it. */
export function parseRequirements(
  raw: unknown,
  where: string,
  fail: (what: string) => never,
): Requirement[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) fail('requires must be an array of { type, name, version }');
  return (raw as unknown[]).map((r, i) => {
    const q = (r ?? {}) as Record<string, unknown>;
    const at = `requires[${i}]`;
    for (const key of ['type', 'name', 'version']) {
      if (typeof q[key] !== 'string' || q[key] === '') fail(`${at} is missing string "${key}"`);
    }
    if (!isFrameworkType(q.type as string)) {
      fail(`${at}.type "${q.type}" is not one of ${Object.keys(FRAMEWORKS).join(', ')}`);
    }
    if (!['undefined', 'string'].includes(typeof q.package)) fail(`${at}.package is not a string`);
    const { type, name, version, package: pkg } = q as RawRequirement;
    return { type, name, version: parseVersion(version, `${where}.${at}.version`), package: pkg };
  });
}

/** `rpi module tcp 1.x (≥ 1.0)`: how messages and laminfo name a requirement. */
export function formatRequirement(r: Requirement): string {
  return `${r.type} module ${r.name} ${r.version.major}.x (≥ ${formatVersion(r.version, false)})`;
}

/**
 * Why `record`'s requirement `req` is not met by the `installed` modules (manifests only, no code
 * runs), or undefined. `declined`: the required module is fine on paper but its open declined.
 */
export function unmetRequirement(
  record: ModuleRecord,
  req: Requirement,
  installed: readonly ModuleRecord[],
  declined?: string,
): string | undefined {
  const found = installed.find((r) => r.type === req.type && r.name === req.name);
  const head = `${record.type} module ${record.name} ${describeRecord(record)} needs ${formatRequirement(req)}`;
  const install = req.package
    ? `npm install ${req.package}@^${formatVersion(req.version, false)}`
    : 'install a package that provides it (run "laminfo" to see what is installed)';
  if (!found) return `${head}, which is not installed: ${install}`;
  if (!isApiCompatible(req.version, found.version)) {
    return `${head}, but ${req.name} ${formatVersion(found.version)} is installed, ${describeRecord(found)}: ${install}`;
  }
  if (found.incompatible) return `${head}, which is installed but unusable: ${found.incompatible}`;
  return declined && `${head}, which cannot run here: ${declined}`;
}
