import { pathToFileURL } from 'node:url';
import type { ModuleRecord } from './discovery';
import { SsiError } from './errors';
import type { OpenContext, SsiModule } from './module';
import type { ParamRegistry } from './params';
import type { Requirement } from './requirements';
import { formatRequirement, parseRequirements } from './requirements';
import type { VerboseStream } from './verbose';
import { formatVersion, parseVersion } from './version';

/** A module after `open`: available, or not (closed again, or never loaded) with the reason. */
export type OpenedModule<M extends SsiModule = SsiModule> =
  | { record: ModuleRecord; available: true; module: M }
  | { record: ModuleRecord; available: false; reason: string };

export const DEFAULT_PRIORITY = 0;

/** Where the start-up bundle loader of this process is (scripts/bundle-loader.cjs). */
const BUNDLE_LOADER = Symbol.for('@ssi/start-up-bundles.loader');

/**
 * The exports of a module's entry file when it is a façade of a start-up bundle the process has
 * loaded already (from mpirun's start-up snapshot): the same objects an import of the file gives,
 * without Node's ES module loader (scripts/bundle-loader.cjs, `loadedPart`).
 */
function loadedPart(entryFile: string): Record<string, unknown> | undefined {
  const loader = (globalThis as Record<symbol, unknown>)[BUNDLE_LOADER] as
    | { loadedPart?: (file: string) => Record<string, unknown> | undefined }
    | undefined;
  return loader?.loadedPart?.(entryFile);
}

/** Imports a module's code (the first time anything of it runs) and checks its meta data. */
export async function loadModule<M extends SsiModule = SsiModule>(
  record: ModuleRecord,
): Promise<M> {
  if (record.incompatible) throw new SsiError('INCOMPATIBLE', record.incompatible);
  let exported: unknown = record.staticModule;
  if (!exported) {
    let ns: Record<string, unknown>;
    try {
      ns = loadedPart(record.entryFile!) ?? (await import(pathToFileURL(record.entryFile!).href));
    } catch (err) {
      throw new SsiError(
        'BAD_MODULE',
        `${record.type} module "${record.name}" (${record.location}) failed to load: ${(err as Error).message}`,
      );
    }
    exported = ns.default ?? ns.module;
  }
  checkModuleObject(exported, record);
  return exported as M;
}

/**
 * Registers the module's parameters (and `<type>_<name>_priority` when it declares none),
 * then runs its `open`. A module whose open declines is closed and reported unavailable.
 */
export async function openModule<M extends SsiModule>(
  record: ModuleRecord,
  params: ParamRegistry,
  verbose: VerboseStream,
): Promise<OpenedModule<M>> {
  const module = await loadModule<M>(record);
  registerModuleParams(module, params);
  const prefix = `${module.type}_${module.name}_`;
  const ctx: OpenContext = {
    register: (param, spec) =>
      params.register(prefix + param, spec, `${module.type} ${module.name}`),
    param: (param) => params.get(prefix + param),
    verbose: (level, message) => verbose.log(level, `${module.name}: ${message}`),
  };
  let result: unknown;
  try {
    result = await module.open?.(ctx);
  } catch (err) {
    if (err instanceof SsiError && err.code === 'BAD_PARAM') throw err;
    result = `open failed: ${(err as Error).message}`;
  }
  if (result === false || typeof result === 'string') {
    const reason = typeof result === 'string' ? result : 'its open function declined';
    verbose.log(0, `${module.type} module ${module.name} is not available: ${reason}`);
    await closeModule(module, verbose);
    return { record, available: false, reason };
  }
  return { record, module, available: true };
}

export function registerModuleParams(module: SsiModule, params: ParamRegistry): void {
  const prefix = `${module.type}_${module.name}_`;
  const owner = `${module.type} ${module.name}`;
  for (const [param, spec] of Object.entries(module.params ?? {})) {
    params.register(prefix + param, spec, owner);
  }
  if (!params.isRegistered(`${prefix}priority`)) {
    params.register(
      `${prefix}priority`,
      { type: 'int', default: DEFAULT_PRIORITY, help: `Priority of the ${owner} module (0-100)` },
      owner,
    );
  }
}

export async function closeModule(module: SsiModule, verbose: VerboseStream): Promise<void> {
  try {
    await module.close?.();
  } catch (err) {
    verbose.log(0, `${module.type} module ${module.name}: close failed: ${(err as Error).message}`);
  }
}

function checkModuleObject(value: unknown, record: ModuleRecord): void {
  const where = `${record.type} module "${record.name}" (${record.location})`;
  const fail = (what: string): never => {
    throw new SsiError('BAD_MODULE', `${where}${what}`);
  };
  if (value === null || typeof value !== 'object') {
    fail(' exports no module object; export default an object made with defineModule()');
  }
  const m = value as Record<string, unknown>;
  for (const key of ['ssiApi', 'type', 'typeApi', 'name', 'version']) {
    if (typeof m[key] !== 'string') fail(`: module object is missing string "${key}"`);
  }
  if (m.type !== record.type || m.name !== record.name) {
    fail(
      `: manifest says ${record.type}/${record.name} but the module object says ${m.type}/${m.name}`,
    );
  }
  // The module object and its manifest are one package: they must agree exactly (the host
  // only needs to be compatible, which discovery checked).
  const typeApi = formatVersion(parseVersion(m.typeApi as string, `${where}: typeApi`));
  if (typeApi !== formatVersion(record.typeApi)) {
    fail(
      `: manifest declares ${record.type} API ${formatVersion(record.typeApi)} but the module object says ${typeApi}; rebuild the package`,
    );
  }
  const requires = parseRequirements(m.requires, where, (what) => fail(`: module object: ${what}`));
  const show = (rs: Requirement[]) => rs.map(formatRequirement).sort().join(', ') || 'nothing';
  if (show(requires) !== show(record.requires)) {
    fail(
      `: manifest requires ${show(record.requires)} but the module object requires ${show(requires)}; rebuild the package`,
    );
  }
}
