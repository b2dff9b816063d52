import type { ParamRegistry } from './params';

/**
 * A framework's diagnostic stream, with the levels of the cr report's `lam_ssi_cr_verbose`:
 * below 0 silent, 0 the minimal output of `-v`, 1000 everything (`-d`). `<type>_verbose`
 * wins over `ssi_verbose`.
 */
export interface VerboseStream {
  readonly level: number;
  enabled(level: number): boolean;
  log(level: number, message: string): void;
}

export const VERBOSE_SILENT = -1;
export const VERBOSE_MINIMAL = 0;
export const VERBOSE_DEBUG = 1000;

export function registerVerboseParams(params: ParamRegistry, type: string): void {
  const help = 'Verbosity: <0 silent, 0 minimal (like -v), 1000 everything (like -d)';
  if (!params.isRegistered('ssi_verbose')) {
    params.register('ssi_verbose', { type: 'int', default: VERBOSE_SILENT, help }, 'ssi');
  }
  if (type !== 'ssi') {
    params.register(`${type}_verbose`, { type: 'int', default: VERBOSE_SILENT, help }, type);
  }
}

export function createVerboseStream(
  params: ParamRegistry,
  type: string,
  write: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): VerboseStream {
  registerVerboseParams(params, type);
  const own = params.lookup(type === 'ssi' ? 'ssi_verbose' : `${type}_verbose`);
  const level = own.source !== 'default' ? Number(own.value) : params.get<number>('ssi_verbose');
  const enabled = (at: number) => level >= 0 && at <= level;
  return { level, enabled, log: (at, message) => enabled(at) && write(`[ssi ${type}] ${message}`) };
}
