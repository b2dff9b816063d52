import { SsiError } from './errors';

export interface SsiArgs {
  /** `--ssi name value` settings, in order, the last of a repeated name winning. */
  settings: Map<string, string>;
  /** Everything else, in order. */
  rest: string[];
}

/**
 * Pulls every `--ssi name value` out of a command line. Arguments after `--` or after the
 * program to run (`stopAt`) belong to that program and are left alone.
 */
export function parseSsiArgs(argv: readonly string[], stopAt = -1): SsiArgs {
  const settings = new Map<string, string>();
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--' || (stopAt >= 0 && i >= stopAt)) {
      rest.push(...argv.slice(i));
      break;
    }
    if (arg !== '--ssi' && arg !== '-ssi') {
      rest.push(arg);
      continue;
    }
    const name = argv[i + 1];
    const value = argv[i + 2];
    if (name === undefined || name.startsWith('-')) {
      throw new SsiError('BAD_ARGS', `${arg} needs a name and a value: ${arg} <name> <value>`);
    }
    if (value === undefined) {
      throw new SsiError('BAD_ARGS', `${arg} ${name} is missing its value: ${arg} ${name} <value>`);
    }
    settings.set(name, value);
    i += 2;
  }
  return { settings, rest };
}
