import type { Discovery, DiscoveryOptions } from './discovery';
import { discoverModules, modulePathFrom } from './discovery';
import { ParamRegistry, type ParamSpec } from './params';
import { parseSsiArgs } from './ssi-args';
import { registerVerboseParams } from './verbose';

/** Discovery's options too: `searchFrom` (default: the cwd), `staticModules`, `packagesIn`. */
export interface SsiContextOptions extends Omit<DiscoveryOptions, 'modulePath'> {
  /** The command line; `--ssi name value` pairs are taken out of it. */
  argv?: readonly string[];
  /** Index in argv from which arguments belong to a program being launched. */
  stopAt?: number;
  env?: Record<string, string | undefined>;
}

export interface SsiContext {
  params: ParamRegistry;
  discovery: Discovery;
  /** argv without the `--ssi` settings. */
  rest: string[];
}

/** What every SSI process does first: read its parameters, then find its modules. */
export function createSsiContext(options: SsiContextOptions = {}): SsiContext {
  const env = options.env ?? process.env;
  const { settings, rest } = parseSsiArgs(options.argv ?? [], options.stopAt);
  const params = new ParamRegistry({ commandLine: settings, env });
  registerBaseParams(params);
  const discovery = discoverModules({
    ...options,
    searchFrom: options.searchFrom ?? [process.cwd()],
    modulePath: modulePathFrom(params, env),
  });
  return { params, discovery, rest };
}

const MODULE_PATH: ParamSpec = {
  type: 'string',
  default: '',
  help: 'Drop-in module directories (":"-separated); each sub-directory is one module package. SSI_MODULE_PATH is searched too.',
};

/** Parameters of the meta framework itself (the `ssi_base_*` of LAM). */
export function registerBaseParams(params: ParamRegistry): void {
  params.register('ssi_base_module_path', MODULE_PATH, 'ssi');
  if (!params.isRegistered('ssi_verbose')) registerVerboseParams(params, 'ssi');
}
