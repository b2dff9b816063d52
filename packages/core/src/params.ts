import { SsiError } from './errors';
import type { ParamFile } from './param-file';
import { loadParamFile } from './param-file';

export type ParamType = 'int' | 'string' | 'boolean';
export type ParamValue = number | string | boolean;

export interface ParamSpec {
  type: ParamType;
  default: ParamValue;
  help: string;
}

/** Where a value came from, highest precedence first (Ch. 3.2.5). */
export type ParamSource = 'command line' | 'environment' | 'parameter file' | 'default';

export interface ParamLookup {
  name: string;
  value: ParamValue;
  source: ParamSource;
  /** Where exactly: `--ssi`, the variable name, or `file:line`. */
  origin: string;
  spec: ParamSpec;
  /** Who registered the parameter, e.g. "rpi tcp". */
  owner: string;
}

export const ENV_PREFIX = 'LAM_MPI_SSI_';
/** Set by a launcher for its processes: where each forwarded `LAM_MPI_SSI_*` value came from. */
export const ORIGINS_ENV = 'SSI_PARAM_ORIGINS';

export interface ParamSourcesInit {
  /** `--ssi name value` settings of this process's command line. */
  commandLine?: ReadonlyMap<string, string> | Record<string, string>;
  /** Defaults to `process.env`. */
  env?: Record<string, string | undefined>;
  /** A parameter file already read; defaults to the one `SSI_PARAM_FILE` or `$HOME` names. */
  paramFile?: ParamFile;
}

interface RawSetting {
  raw: string;
  source: Exclude<ParamSource, 'default'>;
  origin: string;
}

/**
 * The central parameter service: modules register typed parameters, everyone looks values up,
 * and every lookup says which source supplied the value.
 */
export class ParamRegistry {
  private readonly specs = new Map<string, { spec: ParamSpec; owner: string }>();
  private readonly commandLine: Map<string, string>;
  private readonly env: Record<string, string | undefined>;
  private readonly file: ParamFile;
  private readonly forwarded: Record<string, Omit<RawSetting, 'raw'> | undefined>;

  constructor(init: ParamSourcesInit = {}) {
    this.commandLine = new Map(
      init.commandLine instanceof Map ? init.commandLine : Object.entries(init.commandLine ?? {}),
    );
    this.env = init.env ?? process.env;
    this.file = init.paramFile ?? loadParamFile(this.env);
    this.forwarded = parseOrigins(this.env[ORIGINS_ENV]);
  }

  register(name: string, spec: ParamSpec, owner = 'ssi'): void {
    checkSpec(name, spec);
    const existing = this.specs.get(name);
    if (existing && existing.spec.type !== spec.type) {
      throw new SsiError(
        'BAD_PARAM',
        `parameter ${name} registered twice with different types (${existing.spec.type} by ${existing.owner}, ${spec.type} by ${owner})`,
      );
    }
    this.specs.set(name, { spec, owner });
    this.lookup(name); // a bad value is reported when the parameter appears, not when first read
  }

  isRegistered(name: string): boolean {
    return this.specs.has(name);
  }

  /** The typed value of a registered parameter and where it came from. */
  lookup(name: string): ParamLookup {
    const entry = this.specs.get(name);
    if (!entry) throw new SsiError('BAD_PARAM', `parameter ${name} is not registered`);
    const { spec, owner } = entry;
    const setting = this.rawSetting(name);
    if (!setting) {
      return { name, value: spec.default, source: 'default', origin: 'default', spec, owner };
    }
    const value = convert(name, spec.type, setting);
    return { name, value, source: setting.source, origin: setting.origin, spec, owner };
  }

  /** The value of a registered parameter. */
  get<T extends ParamValue = ParamValue>(name: string): T {
    return this.lookup(name).value as T;
  }

  /** An explicit setting of any name, registered or not (selectors like `rpi` are read so). */
  rawSetting(name: string): RawSetting | undefined {
    const cli = this.commandLine.get(name);
    if (cli !== undefined) return { raw: cli, source: 'command line', origin: '--ssi' };
    const envName = ENV_PREFIX + name;
    const fromEnv = this.env[envName];
    const from = this.forwarded[name] ?? { source: 'environment' as const, origin: envName };
    if (fromEnv !== undefined) return { raw: fromEnv, ...from };
    const fromFile = this.file.values.get(name);
    if (fromFile) {
      return { raw: fromFile.value, source: 'parameter file', origin: fromFile.where };
    }
    return undefined;
  }

  list(): ParamLookup[] {
    return [...this.specs.keys()].sort().map((name) => this.lookup(name));
  }

  /** Names set by the user on any source, highest precedence value each. */
  explicitSettings(): Map<string, string> {
    const names = new Set<string>([...this.file.values.keys(), ...this.commandLine.keys()]);
    for (const key of Object.keys(this.env)) {
      if (key.startsWith(ENV_PREFIX)) names.add(key.slice(ENV_PREFIX.length));
    }
    const out = new Map<string, string>();
    for (const name of [...names].sort()) out.set(name, this.rawSetting(name)!.raw);
    return out;
  }

  /**
   * The explicit settings as `LAM_MPI_SSI_*` variables: what a launcher puts in the environment
   * of remote processes so that they see the same values (mpirun's propagation).
   */
  toEnvironment(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [name, raw] of this.explicitSettings()) env[ENV_PREFIX + name] = raw;
    return env;
  }

  /** Where the parameter file was looked for, and whether it was there. */
  paramFileInfo(): { path: string; found: boolean } {
    return { path: this.file.path, found: this.file.found };
  }
}

function checkSpec(name: string, spec: ParamSpec): void {
  if (!/^[a-z][a-z0-9_]*$/.test(name)) {
    throw new SsiError(
      'BAD_PARAM',
      `parameter name "${name}" must be lower case letters, digits and "_"`,
    );
  }
  const ok =
    (spec.type === 'int' && Number.isInteger(spec.default)) ||
    (spec.type === 'string' && typeof spec.default === 'string') ||
    (spec.type === 'boolean' && typeof spec.default === 'boolean');
  if (!ok) {
    throw new SsiError(
      'BAD_PARAM',
      `parameter ${name} is declared ${spec.type} but its default is ${JSON.stringify(spec.default)}`,
    );
  }
}

function parseOrigins(text = '{}'): ParamRegistry['forwarded'] {
  try {
    const origins = JSON.parse(text);
    if (origins && typeof origins === 'object') return origins;
  } catch {}
  throw new SsiError('BAD_PARAM', `${ORIGINS_ENV} is not the JSON a launcher writes: ${text}`);
}

const TRUE_WORDS = new Set(['1', 'true', 'yes', 'on']);
const FALSE_WORDS = new Set(['0', 'false', 'no', 'off']);

function convert(name: string, type: ParamType, setting: RawSetting): ParamValue {
  const raw = setting.raw.trim();
  const from = `${setting.source} (${setting.origin})`;
  if (type === 'string') return setting.raw;
  if (type === 'int') {
    if (/^[-+]?\d+$/.test(raw) && Number.isSafeInteger(Number(raw))) return Number(raw);
    throw new SsiError(
      'BAD_PARAM',
      `parameter ${name} expects an integer, but the ${from} gives "${setting.raw}"`,
    );
  }
  const word = raw.toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  throw new SsiError(
    'BAD_PARAM',
    `parameter ${name} expects a boolean (1/0, true/false, yes/no), but the ${from} gives "${setting.raw}"`,
  );
}
