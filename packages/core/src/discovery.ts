import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { isSsiError, SsiError } from './errors';
import { frameworkApi, isFrameworkType, SSI_API_VERSION } from './frameworks';
import { readPackageManifest } from './manifest';
import type { SsiModule } from './module';
import type { ParamRegistry } from './params';
import type { Requirement } from './requirements';
import { parseRequirements } from './requirements';
import { compareCodeUnits } from './selection';
import type { Version } from './version';
import { formatVersion, isApiCompatible, parseVersion } from './version';

export type ModuleOrigin = 'static' | 'node_modules' | 'module path';

/** A module found by discovery. Nothing of its code has been imported yet. */
export interface ModuleRecord {
  type: string;
  name: string;
  typeApi: Version;
  ssiApi: Version;
  version: Version;
  origin: ModuleOrigin;
  /** Package directory, or "registered by the program" for static modules. */
  location: string;
  packageName?: string;
  /** Absolute path of the entry file (dynamic modules). */
  entryFile?: string;
  /** The module object itself (static modules). */
  staticModule?: SsiModule;
  /** Why the module cannot be used by this installation, if it cannot. */
  incompatible?: string;
  /** Modules it needs (manifest `requires`); the framework checks them before opening it. */
  requires: Requirement[];
}

export interface DiscoveryProblem {
  kind: 'bad-manifest' | 'missing-entry' | 'duplicate';
  message: string;
}

export interface DiscoveryOptions {
  /** Modules compiled into the running program; found first (Ch. 3.2.4). */
  staticModules?: readonly SsiModule[];
  /** Directories whose visible `node_modules` trees are searched, in order. */
  searchFrom?: readonly string[];
  /** Drop-in directories; each sub-directory is one module package. */
  modulePath?: readonly string[];
  /** Module package dirs of a `node_modules` tree known without reading it; undefined: scan it. */
  packagesIn?: (nodeModules: string) => readonly string[] | undefined;
}

export interface Discovery {
  modules: ModuleRecord[];
  problems: DiscoveryProblem[];
}

/**
 * Finds every module visible to this process, first one of each (type, name) winning: static
 * registrations, then packages in `node_modules`, then drop-in directories. Reads manifests only.
 */
export function discoverModules(options: DiscoveryOptions): Discovery {
  const found = new Map<string, ModuleRecord>();
  const problems: DiscoveryProblem[] = [];
  const seenPackageDirs = new Set<string>();

  const add = (record: ModuleRecord) => {
    const key = `${record.type}:${record.name}`;
    const first = found.get(key);
    if (!first) {
      found.set(key, record);
      return;
    }
    const samePackage =
      first.packageName === record.packageName &&
      formatVersion(first.version) === formatVersion(record.version);
    if (!samePackage) {
      problems.push({
        kind: 'duplicate',
        message:
          `two packages claim ${record.type} module "${record.name}": ${describeRecord(first)} is used, ` +
          `${describeRecord(record)} is ignored; uninstall one of them`,
      });
    }
  };

  for (const module of options.staticModules ?? []) add(staticRecord(module));

  const scanPackage = (dir: string, origin: ModuleOrigin) => {
    const real = realPath(dir);
    if (!real || seenPackageDirs.has(real)) return;
    seenPackageDirs.add(real);
    let manifest: ReturnType<typeof readPackageManifest>;
    try {
      manifest = readPackageManifest(join(real, 'package.json'));
    } catch (err) {
      if (!isSsiError(err)) throw err;
      problems.push({ kind: 'bad-manifest', message: `${err.message} (package ignored)` });
      return;
    }
    if (!manifest) return;
    for (const entry of manifest.modules) {
      const entryFile = resolve(real, entry.entry);
      if (!existsSync(entryFile)) {
        problems.push({
          kind: 'missing-entry',
          message:
            `${manifest.packageName} (${real}) declares ${entry.type} module "${entry.name}" ` +
            `with entry ${entry.entry}, but that file does not exist; was the package built?`,
        });
        continue;
      }
      const { type, name, typeApi, ssiApi, version, requires } = entry;
      const from = { origin, location: real, packageName: manifest.packageName, entryFile };
      add(withCompatibility({ type, name, typeApi, ssiApi, version, requires, ...from }));
    }
  };

  for (const nodeModules of visibleNodeModules(options.searchFrom ?? [])) {
    const dirs = options.packagesIn?.(nodeModules) ?? packageDirs(nodeModules);
    for (const dir of dirs) scanPackage(dir, 'node_modules');
  }
  for (const dropIn of options.modulePath ?? []) {
    for (const dir of packageDirs(dropIn)) scanPackage(dir, 'module path');
  }

  const modules = [...found.values()].sort(
    (a, b) => compareCodeUnits(a.type, b.type) || compareCodeUnits(a.name, b.name),
  );
  return { modules, problems };
}

/** `SSI_MODULE_PATH`, then the `ssi_base_module_path` parameter, split on the path delimiter. */
export function modulePathFrom(
  params: ParamRegistry,
  env: Record<string, string | undefined> = process.env,
): string[] {
  const fromParam = params.rawSetting('ssi_base_module_path')?.raw;
  return [env.SSI_MODULE_PATH, fromParam]
    .filter((v): v is string => !!v)
    .flatMap((v) => v.split(delimiter))
    .filter(Boolean);
}

/** `pkg@1.2.3 (node_modules: /dir)`: where a module came from, for messages. */
export function describeRecord(r: ModuleRecord): string {
  const pkg = r.packageName ? `${r.packageName}@${formatVersion(r.version)} ` : '';
  return `${pkg}(${r.origin}: ${r.location})`;
}

function staticRecord(module: SsiModule): ModuleRecord {
  const where = `static module ${module.name}`;
  const record: ModuleRecord = {
    type: module.type,
    name: module.name,
    typeApi: parseVersion(module.typeApi, `${where}: typeApi`),
    ssiApi: parseVersion(module.ssiApi, `${where}: ssiApi`),
    version: parseVersion(module.version, `${where}: version`),
    origin: 'static',
    location: 'registered by the program',
    staticModule: module,
    requires: parseRequirements(module.requires, where, (what) => {
      throw new SsiError('BAD_MODULE', `${where}: ${what}`);
    }),
  };
  return withCompatibility(record);
}

/** The version rules of Ch. 3.2.3: same SSI major; same type-API major, minor not newer. */
function withCompatibility(record: ModuleRecord): ModuleRecord {
  const ssi = parseVersion(SSI_API_VERSION);
  if (!isApiCompatible(record.ssiApi, ssi)) {
    record.incompatible =
      `${record.type} module "${record.name}" ${describeRecord(record)} needs SSI API ` +
      `${formatVersion(record.ssiApi)}, this @ssi/core provides ${SSI_API_VERSION}`;
  } else if (!isFrameworkType(record.type)) {
    record.incompatible = `unknown framework type "${record.type}"`;
  } else {
    const host = frameworkApi(record.type);
    if (!isApiCompatible(record.typeApi, host)) {
      record.incompatible =
        `${record.type} module "${record.name}" ${describeRecord(record)} is written for ` +
        `${record.type} API ${formatVersion(record.typeApi)}, this @ssi/core provides ${formatVersion(host)} ` +
        `(major must match, minor may not be newer); install a version of the module built ` +
        `for ${record.type} API ${host.major}.x`;
    }
  }
  return record;
}

/** Like Node's resolution walk: `<dir>/node_modules` for the directory and each parent. */
export function visibleNodeModules(starts: readonly string[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const start of starts) {
    let dir = realPath(resolve(start)) ?? resolve(start);
    for (;;) {
      const candidate = dir.endsWith('/node_modules') ? dir : join(dir, 'node_modules');
      if (!seen.has(candidate) && existsSync(candidate)) {
        seen.add(candidate);
        out.push(candidate);
      }
      const parent = dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  }
  return out;
}

/** Package directories directly inside `dir`, including scoped ones (`@scope/name`). */
export function packageDirs(dir: string): string[] {
  const out: string[] = [];
  for (const name of listDir(dir)) {
    if (name.startsWith('.')) continue;
    const full = join(dir, name);
    if (name.startsWith('@')) {
      for (const inner of listDir(full)) if (!inner.startsWith('.')) out.push(join(full, inner));
    } else {
      out.push(full);
    }
  }
  return out;
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

function realPath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}
