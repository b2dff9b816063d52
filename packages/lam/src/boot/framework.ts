import { type Discovery, Framework, type ParamRegistry } from '@ssi/core';
import { registerLamParams } from '../params';
import { registerBootBaseParams } from './base-params';
import type { BootActions, BootContext, BootLocation, BootModule } from './types';

export interface SelectedBoot {
  name: string;
  module: BootModule;
  actions: BootActions;
  priority: number;
  /** finalize the module (App. B.2.3) and close the framework */
  close(): Promise<void>;
}

/**
 * Opens every boot module found (discovery is done by core: the app's and the CLI's
 * node_modules, SSI_MODULE_PATH) and selects one for this process (Ch. 4.1.6): each module's
 * init says whether it can boot here and at what priority; `--ssi boot <name>` chooses.
 */
export async function selectBootModule(
  ssi: { params: ParamRegistry; discovery: Discovery },
  where: BootLocation,
  ctx: BootContext,
  write?: (line: string) => void,
): Promise<SelectedBoot> {
  registerBootBaseParams(ssi.params);
  registerLamParams(ssi.params);
  const framework = new Framework<BootModule>('boot', { ...ssi, write });
  try {
    await framework.open();
    const selection = await framework.select<{ actions: BootActions }>(async (module) => {
      if (typeof module.init !== 'function') return 'it has no init function';
      const answer = await module.init(where, ctx);
      if (answer === null || typeof answer === 'string') return answer;
      return { priority: answer.priority, actions: answer.actions };
    });
    await framework.closeAllBut([selection.name]);
    return {
      name: selection.name,
      module: selection.module,
      actions: selection.answer.actions,
      priority: selection.answer.priority,
      async close() {
        try {
          await selection.module.finalize?.();
        } finally {
          await framework.close();
        }
      },
    };
  } catch (err) {
    await framework.close();
    throw err;
  }
}
