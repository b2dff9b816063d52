import type { SsiContext } from '@ssi/core';
import { Framework } from '@ssi/core';
import type { Communicator } from '../comm';
import { ErrorClass, MpiError } from '../errors';
import type { CollActions, CollContext, CollFunction, CollModule, CollQueryAnswer } from './types';

/** The module whose functions stand in for every function another module leaves out (Ch. 6.1.3). */
export const FALLBACK_MODULE = 'lam_basic';

/** What a communicator got from the coll framework: every function resolved to an implementation. */
export interface CommColl {
  /** The selected module's name. */
  module: string;
  actions: CollActions;
  /** Which module implements each function (the selected one or the fallback). */
  providers: Partial<Record<CollFunction, string>>;
  /** Modules initialized for this communicator, to finalize when it is freed. */
  initialized: CollModule[];
}

export const COLL_BASE_PARAMS = {
  coll_crossover: {
    type: 'int',
    default: 4,
    help: 'lam_basic: process count from which collectives use binomial trees instead of linear algorithms',
  },
  coll_reduce_crossover: {
    type: 'int',
    default: 4,
    help: 'lam_basic: process count from which reductions use binomial trees instead of linear algorithms',
  },
} as const;

/**
 * The coll framework base: per-communicator selection (Ch. 6.1.4). Every module the user's
 * `--ssi coll ...` allows is asked about each communicator; the highest priority wins; functions
 * it does not provide come from lam_basic, initialized for the same communicator. Modules stay
 * open until MPI.finalize.
 */
export class CollFramework {
  private readonly framework: Framework<CollModule>;
  private opened: Promise<unknown> | undefined;
  private readonly ctx: CollContext;

  constructor(ctx: SsiContext, write?: (line: string) => void) {
    this.framework = new Framework<CollModule>('coll', {
      params: ctx.params,
      discovery: ctx.discovery,
      write,
    });
    const verbose = this.framework.verbose;
    this.ctx = {
      params: ctx.params,
      verbose: (level, message) => verbose.log(level, message),
    };
  }

  /** Selects and initializes the coll module(s) of `comm`. Every member calls this. */
  async select(comm: Communicator): Promise<CommColl> {
    this.opened ??= this.framework.open();
    await this.opened;
    const selection = await this.framework.select<CollQueryAnswer>((m) => {
      if (typeof m.query !== 'function' || typeof m.init !== 'function') {
        return 'it is not a coll module of this API (no query/init function)';
      }
      return m.query(comm, this.ctx);
    });
    const chosen = selection.module;
    const actions: CollActions = { ...(await chosen.init(comm, this.ctx)) };
    const initialized = [chosen];
    const providers: CommColl['providers'] = {};
    for (const fn of Object.keys(actions) as CollFunction[]) providers[fn] = selection.name;
    const fallback = await this.framework.openFallback(FALLBACK_MODULE);
    if (fallback && fallback !== chosen) {
      const basic = await fallback.init(comm, this.ctx);
      initialized.push(fallback);
      for (const [fn, impl] of Object.entries(basic) as [CollFunction, never][]) {
        if (actions[fn] === undefined && !isCheckpointHook(fn)) {
          actions[fn] = impl;
          providers[fn] = FALLBACK_MODULE;
        }
      }
    }
    this.ctx.verbose(
      10,
      `${comm.name}: coll module ${selection.name}` +
        (initialized.length > 1 ? `, missing functions from ${FALLBACK_MODULE}` : ''),
    );
    return { module: selection.name, actions, providers, initialized };
  }

  /** A communicator is freed: each module that initialized for it lets go. */
  async release(comm: Communicator, coll: CommColl): Promise<void> {
    for (const m of coll.initialized) await m.finalize?.(comm);
  }

  async close(): Promise<void> {
    if (this.opened) await this.framework.close();
  }
}

function isCheckpointHook(fn: string): boolean {
  return fn === 'interrupt' || fn === 'checkpoint' || fn === 'continue' || fn === 'restart';
}

/** The function `fn` of a communicator's collectives, or the error saying none is installed. */
export function collFunction<K extends CollFunction>(
  coll: CommColl,
  fn: K,
  comm: Communicator,
): NonNullable<CollActions[K]> {
  const impl = coll.actions[fn];
  if (impl) return impl as NonNullable<CollActions[K]>;
  throw new MpiError(
    ErrorClass.ERR_OTHER,
    `no coll module provides ${fn} on ${comm.name}: the selected module ${coll.module} does not, ` +
      `and ${FALLBACK_MODULE} is not installed (npm install @ssi/coll-lam-basic)`,
  );
}
