import type { ModuleRecord, ParamLookup, SsiContext } from '@ssi/core';
import {
  closeModule,
  createVerboseStream,
  FRAMEWORKS,
  isFrameworkType,
  isSsiError,
  openModule,
  registerVerboseParams,
  SsiError,
} from '@ssi/core';
import { registerFrameworkBases } from '../settings-check';
import { label } from './list-modules';

export interface ParamInfo {
  type: string;
  module: string;
  name: string;
  paramType: string;
  default: string;
  value: string;
  source: string;
  origin: string;
  help: string;
}

export interface ModuleParams {
  type: string;
  module: string;
  /** Why the module would not open here (its parameters are still listed). */
  note?: string;
  params: ParamInfo[];
}

/**
 * Opens the chosen modules (importing their code, as LAM's laminfo does) so that every parameter
 * they register, declared or registered in `open`, is listed with its value and source.
 */
export async function collectParams(
  ctx: SsiContext,
  type: string,
  module: string,
): Promise<ModuleParams[]> {
  registerFrameworkBases(ctx.params);
  const records = chooseModules(ctx, type, module);
  const out: ModuleParams[] = [];
  if (module === 'all') {
    if (type === 'all') out.push(ssiParams(ctx), layerParams(ctx, 'lam'), layerParams(ctx, 'mpi'));
    for (const t of type === 'all' ? Object.keys(FRAMEWORKS) : [type]) {
      out.push(frameworkParams(ctx, t));
    }
  }
  for (const record of records) out.push(await moduleParams(ctx, record));
  return out;
}

function chooseModules(ctx: SsiContext, type: string, module: string): ModuleRecord[] {
  if (type !== 'all' && !isFrameworkType(type)) {
    throw new SsiError(
      'NOT_FOUND',
      `unknown framework type "${type}"; expected one of: all, ${Object.keys(FRAMEWORKS).join(', ')}`,
    );
  }
  const ofType = ctx.discovery.modules.filter((r) => type === 'all' || r.type === type);
  if (module === 'all') return ofType;
  const chosen = ofType.filter((r) => r.name === module);
  if (chosen.length === 0) {
    const names = ofType.map((r) => `${r.type}/${r.name}`).join(', ') || 'none';
    throw new SsiError(
      'NOT_FOUND',
      `no ${type === 'all' ? '' : `${type} `}module named "${module}" is installed; installed: ${names}`,
    );
  }
  return chosen;
}

function ssiParams(ctx: SsiContext): ModuleParams {
  const params = ctx.params.list().filter((p) => p.name.startsWith('ssi_'));
  return { type: 'ssi', module: 'base', params: params.map((p) => info(p, 'ssi', 'base')) };
}

/**
 * A framework's own parameters: every `<type>_*` name that belongs to none of its modules
 * (`rpi_verbose`, `boot_base_timeout`, `coll_crossover`, ...).
 */
function frameworkParams(ctx: SsiContext, type: string): ModuleParams {
  registerFrameworkBases(ctx.params);
  registerVerboseParams(ctx.params, type);
  const modulePrefixes = ctx.discovery.modules
    .filter((r) => r.type === type)
    .map((r) => `${type}_${r.name}_`);
  const params = ctx.params
    .list()
    .filter((p) => p.name.startsWith(`${type}_`))
    .filter((p) => !modulePrefixes.some((m) => p.name.startsWith(m)));
  return { type, module: 'base', params: params.map((p) => info(p, type, 'base')) };
}

/** The run-time environment's (`lam_*`) and the MPI layer's (`mpi_*`) own parameters. */
function layerParams(ctx: SsiContext, layer: 'lam' | 'mpi'): ModuleParams {
  registerFrameworkBases(ctx.params);
  const params = ctx.params.list().filter((p) => p.name.startsWith(`${layer}_`));
  return { type: layer, module: 'base', params: params.map((p) => info(p, layer, 'base')) };
}

async function moduleParams(ctx: SsiContext, record: ModuleRecord): Promise<ModuleParams> {
  const base = { type: record.type, module: record.name };
  if (record.incompatible) return { ...base, note: record.incompatible, params: [] };
  const silent = createVerboseStream(ctx.params, record.type, () => {});
  let note: string | undefined;
  try {
    const opened = await openModule(record, ctx.params, silent);
    if (opened.available) await closeModule(opened.module, silent);
    else note = `would not run here: ${opened.reason}`;
  } catch (err) {
    if (!isSsiError(err)) throw err;
    note = err.message;
  }
  const prefix = `${record.type}_${record.name}_`;
  const params = ctx.params
    .list()
    .filter((p) => p.name.startsWith(prefix))
    .map((p) => info(p, record.type, record.name));
  return { ...base, note, params };
}

function info(p: ParamLookup, type: string, module: string): ParamInfo {
  return {
    type,
    module,
    name: p.name,
    paramType: p.spec.type,
    default: String(p.spec.default),
    value: String(p.value),
    source: p.source,
    origin: p.origin,
    help: p.spec.help,
  };
}

export function paramLines(groups: ModuleParams[]): string[] {
  const lines: string[] = [];
  for (const g of groups) {
    if (g.note) lines.push(`${label(`SSI ${g.type}`)}: module ${g.module}: ${g.note}`);
    for (const p of g.params) {
      const from = p.source === 'default' ? 'default' : `${p.source}, ${p.origin}`;
      lines.push(
        `${label(`SSI ${g.type}`)}: parameter "${p.name}" (${p.paramType}, default: "${p.default}", value: "${p.value}", source: ${from})`,
      );
      lines.push(`${' '.repeat(22)}${p.help}`);
    }
  }
  return lines;
}
