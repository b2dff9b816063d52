/** The values a checkpoint or restart command is given for one process. */
export interface ProcessPlace {
  pid: number;
  rank: number;
  /** The LAM node id, `n<id>` (`n?` outside a lamd-started process). */
  node: string;
  host: string;
  /** The directory this process's image goes to (created empty before the command runs). */
  image: string;
  series: number;
  job: string;
}

export const PLACEHOLDERS = ['pid', 'rank', 'node', 'host', 'image', 'series', 'job'] as const;

/** A value as one word of a POSIX shell command line. */
export function shellQuote(value: string): string {
  if (/^[A-Za-z0-9_./:@%+=,-]+$/.test(value)) return value;
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * The command with every `{name}` replaced by the process's value, shell-quoted. An unknown
 * `{word}` is an error naming it (a typo would otherwise run a command with a literal brace).
 */
export function fillCommand(template: string, place: ProcessPlace, param: string): string {
  return template.replace(/\{([A-Za-z_]+)\}/g, (whole, name: string) => {
    if (!(PLACEHOLDERS as readonly string[]).includes(name)) {
      throw new Error(
        `${param}: unknown placeholder ${whole} in ${JSON.stringify(template)}; ` +
          `expected one of ${PLACEHOLDERS.map((p) => `{${p}}`).join(' ')}`,
      );
    }
    return shellQuote(String(place[name as keyof ProcessPlace]));
  });
}

/** The same values as environment variables (`SSI_CR_PID`, …) for scripts that prefer them. */
export function placeEnv(place: ProcessPlace): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of PLACEHOLDERS) env[`SSI_CR_${name.toUpperCase()}`] = String(place[name]);
  return env;
}
