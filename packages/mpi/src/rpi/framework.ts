import type { Selection, SsiContext } from '@ssi/core';
import { Framework, formatVersion, parseVersion } from '@ssi/core';
import type { RpiModule, RpiQueryAnswer, RpiQueryContext } from './types';

/** The module an rpi selection picked, with what every rank compares (name, version, origin). */
export interface RpiChoice {
  module: RpiModule;
  name: string;
  version: string;
  origin: string;
  answer: RpiQueryAnswer;
  selection: Selection<RpiModule, RpiQueryAnswer>;
}

/**
 * The rpi framework base: opens the rpi modules the user's `--ssi rpi ...` allows, asks each
 * whether it can run (query), and picks the best (Ch. 5.1.3). The scope of the selection is one
 * process from MPI.init to MPI.finalize; agreement across ranks is checked by the caller after
 * the GPS exchange.
 */
export class RpiFramework {
  readonly framework: Framework<RpiModule>;

  constructor(ctx: SsiContext, write?: (line: string) => void) {
    this.framework = new Framework<RpiModule>('rpi', {
      params: ctx.params,
      discovery: ctx.discovery,
      write,
    });
  }

  async select(query: Omit<RpiQueryContext, 'verbose'>): Promise<RpiChoice> {
    const fw = this.framework;
    await fw.open();
    const verbose = (level: number, message: string) => fw.verbose.log(level, message);
    const selection = await fw.select<RpiQueryAnswer>(async (m) => {
      if (typeof m.query !== 'function' || typeof m.init !== 'function') {
        return 'it is not an rpi module of this API (no query/init function)';
      }
      const answer = await m.query({ ...query, verbose });
      if (answer && typeof answer === 'object') {
        if (answer.threadMin > answer.threadMax) {
          return `its thread levels are inverted (min ${answer.threadMin} > max ${answer.threadMax})`;
        }
      }
      return answer;
    });
    const record = fw.recordOf(selection.name);
    const origin = record
      ? `${record.packageName ? `${record.packageName} ` : ''}${record.origin}: ${record.location}`
      : 'unknown';
    return {
      module: selection.module,
      name: selection.name,
      version: formatVersion(parseVersion(selection.module.version)),
      origin,
      answer: selection.answer,
      selection,
    };
  }

  /** Opens a module by name for a module that builds on it (`RpiHost.openModule`). */
  openByName(name: string): Promise<RpiModule> {
    return this.framework.openByName(name);
  }

  /** Closes every module but the selected one. */
  async keepOnly(name: string): Promise<void> {
    await this.framework.closeAllBut([name]);
  }

  async close(): Promise<void> {
    await this.framework.close();
  }
}
