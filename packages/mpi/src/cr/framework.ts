import type { ParamRegistry, SsiContext } from '@ssi/core';
import { Framework, formatVersion, parseVersion } from '@ssi/core';
import type { ModuleChoice } from '../job-runtime';
import type { CrmpiActions, CrmpiModule } from './types';

/** The crmpi module a rank selected, with what every rank compares. */
export interface CrmpiChoice {
  actions: CrmpiActions;
  choice: ModuleChoice;
}

/**
 * The crmpi framework base in a rank: a cr module is selected only when the user asks for one
 * (`--ssi cr self`): checkpointability has a (small) price and a restart contract the program
 * must know about. Selection is job-wide; ranks agree on it in the GPS exchange.
 */
export async function selectCrmpi(
  ctx: SsiContext,
  write: (line: string) => void,
): Promise<CrmpiChoice | null> {
  if (!requested(ctx.params)) return null;
  const fw = new Framework<CrmpiModule>('crmpi', {
    params: ctx.params,
    discovery: ctx.discovery,
    write,
  });
  await fw.open();
  const selection = await fw.select(async (m) => {
    if (typeof m.query !== 'function' || typeof m.init !== 'function') {
      return 'it is not a crmpi module of this API (no query/init function)';
    }
    return m.query({ params: ctx.params });
  });
  await fw.closeAllBut([selection.name]);
  const verbose = (level: number, message: string) => fw.verbose.log(level, message);
  return {
    actions: selection.module.init({ params: ctx.params, verbose }),
    choice: {
      name: selection.name,
      version: formatVersion(parseVersion(selection.module.version)),
    },
  };
}

/** `--ssi cr <list>` was given (and is not only an exclusion). */
function requested(params: ParamRegistry): boolean {
  const raw = params.rawSetting('cr')?.raw;
  return typeof raw === 'string' && raw.trim() !== '' && !raw.trim().startsWith('^');
}
