import type { ModuleRecord, ParamRegistry, SsiContext } from '@ssi/core';
import {
  closeModule,
  closestName,
  createVerboseStream,
  FRAMEWORKS,
  isSsiError,
  openModule,
  parseSelector,
  registerVerboseParams,
  SELECTOR_PARAMS,
  SsiError,
} from '@ssi/core';
import { registerBootBaseParams, registerLamParams } from '@ssi/lam';
import { registerMpiParams } from '@ssi/mpi';

/**
 * The user's `--ssi` settings, `LAM_MPI_SSI_*` variables and parameter file, checked where the
 * command runs: before anything starts, once, naming the source of each mistake (issue 19).
 */

/** What happens to a setting of a name nobody registers: a warning, or a refusal. */
export const UNKNOWN_PARAMS = 'ssi_base_unknown_params';

/** Registers the parameters of the frameworks' bases; a bad value already set throws here. */
export function registerFrameworkBases(params: ParamRegistry): void {
  registerLamParams(params);
  registerBootBaseParams(params);
  registerMpiParams(params);
  for (const type of [...Object.keys(FRAMEWORKS), 'lam']) {
    if (!params.isRegistered(`${type}_verbose`)) registerVerboseParams(params, type);
  }
  if (!params.isRegistered(UNKNOWN_PARAMS)) {
    params.register(
      UNKNOWN_PARAMS,
      {
        type: 'string',
        default: 'warn',
        help: 'A setting of an SSI parameter nobody registers (a typo, mostly): "warn" (mpirun and laminfo say so once) or "error" (mpirun refuses to start the job)',
      },
      'ssi',
    );
  }
}

/** `command line (--ssi)`, `environment (LAM_MPI_SSI_x)`, `parameter file (path:line)`. */
export function sourceOf(params: ParamRegistry, name: string): string {
  const s = params.rawSetting(name);
  return s ? `${s.source} (${s.origin})` : 'default';
}

export interface UnknownSetting {
  name: string;
  /** The closest registered name, when one is close enough to be the intended one. */
  suggestion?: string;
  /** Where it was set: `command line (--ssi)`, ... */
  from: string;
}

/** Explicitly set names that nobody registered, each with the closest known name. */
export function unknownSettings(params: ParamRegistry): UnknownSetting[] {
  const known = new Set([...params.list().map((p) => p.name), ...SELECTOR_PARAMS]);
  return [...params.explicitSettings().keys()]
    .filter((name) => !known.has(name))
    .map((name) => ({
      name,
      suggestion: closestName(name, known),
      from: sourceOf(params, name),
    }));
}

/** One line per unknown setting: `unknown SSI parameter "x" (source); did you mean "y"?`. */
export function unknownSettingLine(u: UnknownSetting): string {
  const hint = u.suggestion ? `; did you mean "${u.suggestion}"?` : '';
  return `unknown SSI parameter "${u.name}" from the ${u.from}${hint}`;
}

/** The framework types a selector picks modules of (`cr`: crlam and crmpi). */
function typesOf(selector: string): string[] {
  return Object.entries(FRAMEWORKS)
    .filter(([, f]) => f.selector === selector)
    .map(([type]) => type);
}

/**
 * Every module a selector names (`--ssi rpi nosuch`, `--ssi coll ^tunde`) must be installed
 * here: a name that is not is reported before anything starts, with the closest installed one.
 */
export function checkSelectors(ctx: SsiContext): void {
  for (const selector of SELECTOR_PARAMS) {
    const raw = ctx.params.rawSetting(selector)?.raw;
    if (raw === undefined) continue;
    const request = parseSelector(raw, selector);
    const types = typesOf(selector);
    const installed = [
      ...new Set(ctx.discovery.modules.filter((r) => types.includes(r.type)).map((r) => r.name)),
    ];
    const verb = request.include ? 'selects' : 'excludes';
    for (const name of [...(request.include ?? []), ...request.exclude]) {
      if (installed.includes(name)) continue;
      const near = closestName(name, installed);
      throw new SsiError(
        'NOT_FOUND',
        `the ${sourceOf(ctx.params, selector)} ${verb} ${selector} module "${name}", which is not installed` +
          `${near ? `; did you mean "${near}"?` : ''} (installed ${selector} modules: ${installed.join(', ') || 'none'})`,
      );
    }
  }
}

/**
 * Opens (as `laminfo --param` does, then closes) the modules whose parameters the settings
 * name, so that their parameters are known and the values set for them are checked: first the
 * module a name's prefix names (`rpi_tcp_*`: tcp), then, for names still unknown, every module
 * of the type (`rpi_*`), so that the closest name can be among theirs.
 */
export async function learnModuleParams(ctx: SsiContext): Promise<void> {
  const opened = new Set<ModuleRecord>();
  const open = async (records: ModuleRecord[]) => {
    for (const record of records) {
      if (opened.has(record) || record.incompatible) continue;
      opened.add(record);
      await openQuietly(ctx, record);
    }
  };
  const unknown = () => unknownSettings(ctx.params).map((u) => u.name);
  const ofType = (name: string) =>
    ctx.discovery.modules.filter((r) => name.startsWith(`${r.type}_`));
  for (const name of unknown()) {
    await open(ofType(name).filter((r) => name.startsWith(`${r.type}_${r.name}_`)));
  }
  for (const name of unknown()) await open(ofType(name));
}

/** Opens and closes one module for its parameters; a bad value set for one of them throws. */
async function openQuietly(ctx: SsiContext, record: ModuleRecord): Promise<void> {
  const silent = createVerboseStream(ctx.params, record.type, () => {});
  try {
    const opened = await openModule(record, ctx.params, silent);
    if (opened.available) await closeModule(opened.module, silent);
  } catch (err) {
    if (isSsiError(err) && err.code === 'BAD_PARAM') throw err;
    // A module that cannot even load is reported where it is selected; here only its names count.
  }
}

/**
 * What `mpirun` checks before it boots or starts anything: the selectors, every value of a
 * framework's or a named module's parameter, and names nobody registers (a warning, or an error
 * when `ssi_base_unknown_params` is "error").
 */
export async function checkSettings(ctx: SsiContext, warn: (line: string) => void): Promise<void> {
  registerFrameworkBases(ctx.params);
  checkSelectors(ctx);
  await learnModuleParams(ctx);
  const policy = ctx.params.get<string>(UNKNOWN_PARAMS);
  if (policy !== 'warn' && policy !== 'error') {
    throw new SsiError(
      'BAD_PARAM',
      `parameter ${UNKNOWN_PARAMS} expects "warn" or "error", but the ${sourceOf(ctx.params, UNKNOWN_PARAMS)} gives "${policy}"`,
    );
  }
  const unknown = unknownSettings(ctx.params);
  if (policy === 'error' && unknown.length > 0) {
    throw new SsiError(
      'BAD_PARAM',
      `${unknown.map(unknownSettingLine).join('; ')} (${UNKNOWN_PARAMS} is "error")`,
    );
  }
  for (const u of unknown) warn(`warning: ${unknownSettingLine(u)}`);
}
