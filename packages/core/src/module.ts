import type { ParamSpec, ParamValue } from './params';

/**
 * What a module's entry file exports (as `default` or as `module`): the meta data of App. A.6.2
 * plus the framework's own functions. Framework packages extend this with their interface.
 */
export interface SsiModule {
  /** SSI API version the module was written against, e.g. "1.0.0". */
  ssiApi: string;
  /** Framework type: "boot", "rpi", "coll", "crlam", "crmpi". */
  type: string;
  /** Version of the framework's interface the module implements, e.g. "1.1.0". */
  typeApi: string;
  /** Module name; parameters are named `<type>_<name>_<param>` (the prefix rule, App. A.1.1). */
  name: string;
  /** The module's own version. */
  version: string;
  /** Modules this one needs, as in its manifest: `[{ type: 'rpi', name: 'tcp', version: '1.0' }]`. */
  requires?: readonly { type: string; name: string; version: string; package?: string }[];
  /** Parameters, by short name. Registered before `open` runs. */
  params?: Record<string, ParamSpec>;
  /**
   * Called once per process before any other function. Returning `false` (or a string giving
   * the reason) means "I cannot run here": the module is closed and ignored (App. A.6.3).
   */
  open?(ctx: OpenContext): OpenResult | Promise<OpenResult>;
  /** Called once, last, for every module whose `open` succeeded (App. A.6.4). */
  close?(): void | Promise<void>;
}

export type OpenResult = boolean | string | undefined;

/** What `open` may use: its own parameters and a verbose stream. */
export interface OpenContext {
  /** Register another parameter at run time (in addition to the declared `params`). */
  register(param: string, spec: ParamSpec): void;
  /** Value of one of this module's parameters, by short name. */
  param(param: string): ParamValue;
  /** Write a diagnostic line at the given verbosity level to the framework's verbose stream. */
  verbose(level: number, message: string): void;
}

/** Identity helper that gives module authors type checking and completion. */
export function defineModule<T extends SsiModule>(module: T): T {
  return module;
}
