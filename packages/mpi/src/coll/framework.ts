import type { SsiContext } from '@ssi/core';
import { Framework, isSsiError, SsiError } from '@ssi/core';
import { ErrorClass, MpiError } from '../errors';
import type { CollComm } from './coll-comm';
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
  /** Why lam_basic fills in nothing here (excluded or not installed); unset when it does. */
  noFallback?: string;
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
 * it does not provide come from lam_basic, initialized for the same communicator. lam_basic is
 * also the last candidate: when every allowed module declines a communicator (`--ssi coll smp` on
 * COMM_SELF), lam_basic serves it. `--ssi coll ^lam_basic` turns both off. Modules stay open until
 * MPI.finalize.
 */
export class CollFramework {
  private readonly framework: Framework<CollModule>;
  private opened: Promise<unknown> | undefined;
  private readonly ctx: CollContext;
  /** Named modules already warned about: a warning is said once, by world rank 0. */
  private readonly warned = new Set<string>();
  private readonly warn: (line: string) => void;

  constructor(ctx: SsiContext, write?: (line: string) => void) {
    // Warnings go to stderr as they are: said by one rank only, a "[rank N]" prefix would mislead.
    this.warn = (line) => process.stderr.write(`${line}\n`);
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
  async select(comm: CollComm): Promise<CommColl> {
    this.opened ??= this.framework.open();
    await this.opened;
    const selection = await this.choose(comm);
    this.warnNamedFailures(comm, selection);
    const chosen = selection.module;
    const actions: CollActions = { ...(await chosen.init(comm, this.ctx)) };
    const initialized = [chosen];
    const providers: CommColl['providers'] = {};
    for (const fn of Object.keys(actions) as CollFunction[]) providers[fn] = selection.name;
    const fallback = this.fallbackExcluded()
      ? undefined
      : await this.framework.openFallback(FALLBACK_MODULE);
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
    const coll: CommColl = { module: selection.name, actions, providers, initialized };
    if (!fallback) coll.noFallback = this.whyNoFallback();
    return coll;
  }

  /**
   * The module that serves `comm`: the best one the selector allows, else lam_basic as the last
   * candidate. Only "none can run" falls through to lam_basic; a requested module that is not
   * installed stays an error (a typo must not silently become lam_basic).
   */
  private async choose(comm: CollComm): Promise<Chosen> {
    const declined: string[] = [];
    const failed: Chosen['failed'] = [];
    const query = async (m: CollModule) => {
      if (typeof m.query !== 'function' || typeof m.init !== 'function') {
        return 'it is not a coll module of this API (no query/init function)';
      }
      try {
        const answer = await m.query(comm, this.ctx);
        if (answer === null || typeof answer === 'string') {
          declined.push(`${m.name}: ${answer ?? 'its query declined'}`);
        }
        return answer;
      } catch (err) {
        declined.push(`${m.name}: its query failed`);
        failed.push({ name: m.name, reason: `its query failed: ${(err as Error).message}` });
        throw err;
      }
    };
    try {
      return { ...(await this.framework.select<CollQueryAnswer>(query)), failed };
    } catch (err) {
      if (!isSsiError(err) || err.code !== 'NONE_AVAILABLE') throw err;
      const { module, problem } = await this.lastCandidate(comm);
      if (!module) throw new SsiError('NONE_AVAILABLE', `${err.message}\n${problem}`);
      this.ctx.verbose(
        0,
        `${comm.name}: selected coll module ${FALLBACK_MODULE} as the last candidate: every ` +
          `module ${this.requestText()} allows declined (${declined.join('; ') || 'none answered'})`,
      );
      return { name: FALLBACK_MODULE, module, failed };
    }
  }

  /**
   * A module the user named (`--ssi coll dissem,lam_basic`) that cannot run at all (it is
   * incompatible, its open or its query failed) is a warning naming why, not a silent skip; an
   * ordinary decline (smp on one node) is not: it is what a query is for (`coll_verbose` shows
   * it). Said once per module, by world rank 0, where every rank would say the same.
   */
  private warnNamedFailures(comm: CollComm, chosen: Chosen): void {
    // (A communicator built without a process group, as in unit tests, counts as world rank 0.)
    if ((comm.group?.procs[comm.rank]?.gps.grank ?? 0) !== 0) return;
    const unavailable = this.framework
      .candidates()
      .filter((c) => c.unavailable !== undefined)
      .map((c) => ({ name: c.name, reason: `it is unavailable: ${c.unavailable}` }));
    for (const f of [...unavailable, ...chosen.failed]) {
      if (!this.framework.request.include?.includes(f.name) || this.warned.has(f.name)) continue;
      this.warned.add(f.name);
      this.warn(
        `warning: coll module "${f.name}", named by ${this.requestText()}, cannot run: ${f.reason}; ${chosen.name} serves ${comm.name}`,
      );
    }
  }

  /** lam_basic when it may and will serve `comm`, else why not (for the selection error). */
  private async lastCandidate(comm: CollComm): Promise<{ module?: CollModule; problem: string }> {
    const last = `${FALLBACK_MODULE}, the last candidate,`;
    if (this.fallbackExcluded()) return { problem: `${last} is excluded (${this.requestText()}).` };
    const known = this.framework.candidates().find((c) => c.name === FALLBACK_MODULE);
    if (known?.module) return { problem: `${last} declined too.` };
    if (known?.unavailable) return { problem: `${last} is unavailable: ${known.unavailable}` };
    const basic = await this.framework.openFallback(FALLBACK_MODULE);
    if (!basic) return { problem: `${last} ${NOT_INSTALLED}.` };
    const answer = await basic.query(comm, this.ctx);
    if (answer === null || typeof answer === 'string') {
      return { problem: `${last} declined: ${answer ?? 'its query declined'}` };
    }
    return { module: basic, problem: '' };
  }

  /** `--ssi coll ^lam_basic`: no last candidate, no functions filled in. */
  private fallbackExcluded(): boolean {
    return this.framework.request.exclude.includes(FALLBACK_MODULE);
  }

  private whyNoFallback(): string {
    return this.fallbackExcluded()
      ? `${FALLBACK_MODULE} is excluded (${this.requestText()})`
      : `${FALLBACK_MODULE} ${NOT_INSTALLED}`;
  }

  private requestText(): string {
    const text = this.framework.request.text;
    return text ? `--ssi coll ${text}` : 'the coll selector';
  }

  /** A communicator is freed: each module that initialized for it lets go. */
  async release(comm: CollComm, coll: CommColl): Promise<void> {
    for (const m of coll.initialized) await m.finalize?.(comm);
  }

  async close(): Promise<void> {
    if (this.opened) await this.framework.close();
  }
}

/** The module serving a communicator, and the named ones that failed to answer on the way. */
interface Chosen {
  name: string;
  module: CollModule;
  failed: { name: string; reason: string }[];
}

const NOT_INSTALLED = 'is not installed (npm install @ssi/coll-lam-basic)';

function isCheckpointHook(fn: string): boolean {
  return fn === 'interrupt' || fn === 'checkpoint' || fn === 'continue' || fn === 'restart';
}

/** The function `fn` of a communicator's collectives, or the error saying none is installed. */
export function collFunction<K extends CollFunction>(
  coll: CommColl,
  fn: K,
  comm: CollComm,
): NonNullable<CollActions[K]> {
  const impl = coll.actions[fn];
  if (impl) return impl as NonNullable<CollActions[K]>;
  throw new MpiError(
    ErrorClass.ERR_OTHER,
    `no coll module provides ${fn} on ${comm.name}: the selected module ${coll.module} does not, ` +
      `and ${coll.noFallback ?? `${FALLBACK_MODULE} ${NOT_INSTALLED}`}`,
  );
}
