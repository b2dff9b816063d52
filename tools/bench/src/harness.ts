import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A measured quantity over repetitions. */
export interface Stat {
  median: number;
  min: number;
  max: number;
  samples: number[];
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function stat(samples: number[]): Stat {
  return { median: median(samples), min: Math.min(...samples), max: Math.max(...samples), samples };
}

/**
 * Run `once` `reps` times (after `warmup` unrecorded runs) and summarise what it returns (a time,
 * a rate, ...). Repetitions run one after another, never concurrently.
 */
/**
 * The JSON object of a driver's output line that starts with `prefix` ("PINGPONG ", say), or
 * undefined for any other line (mpirun's warnings). A prefixed line that is not a JSON object
 * throws, naming the line.
 */
export function prefixedJson(line: string, prefix: string): Record<string, unknown> | undefined {
  const l = line.trim();
  if (!l.startsWith(prefix)) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(l.slice(prefix.length));
  } catch {
    v = undefined;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new Error(`malformed driver line: ${l}`);
  return v as Record<string, unknown>;
}

/** A non-empty array of finite positive numbers (the samples of a driver line). */
export function positiveNumbers(x: unknown): x is number[] {
  return (
    Array.isArray(x) &&
    x.length > 0 &&
    x.every((n) => typeof n === 'number' && Number.isFinite(n) && n > 0)
  );
}

/**
 * The result lines of a driver's whole output, parsed by `parseLine` (undefined: not a result
 * line), checked to be exactly `expected` of them and then, one by one with its index, by
 * `check` (a message: that result does not match the plan).
 */
export function resultLines<T>(
  text: string,
  parseLine: (line: string) => T | undefined,
  expected: number,
  check: (result: T, i: number) => string | undefined,
): T[] {
  const out: T[] = [];
  for (const line of text.split('\n')) {
    const r = parseLine(line);
    if (r !== undefined) out.push(r);
  }
  if (out.length !== expected) throw new Error(`expected ${expected} results, got ${out.length}`);
  out.forEach((r, i) => {
    const problem = check(r, i);
    if (problem !== undefined) throw new Error(`result ${i}: ${problem}`);
  });
  return out;
}

export async function repeat(
  reps: number,
  once: () => number | Promise<number>,
  warmup = 1,
): Promise<Stat> {
  for (let i = 0; i < warmup; i++) await once();
  const samples: number[] = [];
  for (let i = 0; i < reps; i++) samples.push(await once());
  return stat(samples);
}

/** Nanoseconds since an arbitrary origin, as a number. */
export function nowNs(): number {
  return Number(process.hrtime.bigint());
}

export interface Column<R> {
  title: string;
  value: (row: R) => string | number | null | undefined;
  /** Digits after the point for numbers; default 2. */
  digits?: number;
}

/** Render rows as an aligned text table (numbers right-aligned, '-' for missing values). */
export function formatTable<R>(columns: Column<R>[], rows: R[]): string {
  const cells = rows.map((r) =>
    columns.map((c) => {
      const v = c.value(r);
      if (v === null || v === undefined || (typeof v === 'number' && !Number.isFinite(v)))
        return '-';
      return typeof v === 'number' ? v.toFixed(c.digits ?? 2) : v;
    }),
  );
  const widths = columns.map((c, i) =>
    Math.max(c.title.length, ...cells.map((row) => row[i]!.length)),
  );
  const line = (xs: string[], numeric: boolean[]) =>
    xs
      .map((x, i) => (numeric[i] ? x.padStart(widths[i]!) : x.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const numeric = columns.map((c) => rows.some((r) => typeof c.value(r) === 'number'));
  const out = [
    line(
      columns.map((c) => c.title),
      numeric,
    ),
    widths.map((w) => '-'.repeat(w)).join('  '),
  ];
  for (const row of cells) out.push(line(row, numeric));
  return out.join('\n');
}

/** tools/bench/results, next to src/ and dist/ (git-ignored). */
export function resultsDir(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', 'results');
}

/** Facts about the machine every result file records. */
export function environment() {
  const c = cpus();
  return {
    host: hostname(),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: c.length,
    cpuModel: c[0]?.model ?? 'unknown',
  };
}

/**
 * Write machine-readable results to <dir>/<name>-<timestamp>.json and return the path.
 * The document is { bench, timestamp, environment, ...data }.
 */
export function writeResults(
  name: string,
  data: Record<string, unknown>,
  dir = resultsDir(),
): string {
  mkdirSync(dir, { recursive: true });
  const timestamp = new Date().toISOString();
  const file = join(dir, `${name}-${timestamp.replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ bench: name, timestamp, environment: environment(), ...data }, null, 2)}\n`,
  );
  return file;
}

/** Options: --name value, --flag; numbers and lists (comma separated) parsed on request. */
export class Options {
  private readonly values = new Map<string, string | true>();
  readonly positional: string[] = [];

  constructor(args: string[]) {
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      if (a.startsWith('--')) {
        const eq = a.indexOf('=');
        if (eq > 0) this.values.set(a.slice(2, eq), a.slice(eq + 1));
        else if (i + 1 < args.length && !args[i + 1]!.startsWith('--'))
          this.values.set(a.slice(2), args[++i]!);
        else this.values.set(a.slice(2), true);
      } else {
        this.positional.push(a);
      }
    }
  }

  has(name: string): boolean {
    return this.values.has(name);
  }

  string(name: string, dflt: string): string {
    const v = this.values.get(name);
    return typeof v === 'string' ? v : dflt;
  }

  number(name: string, dflt: number): number {
    const v = this.values.get(name);
    if (v === undefined) return dflt;
    const n = typeof v === 'string' ? parseSize(v) : Number.NaN;
    if (!Number.isFinite(n)) throw new Error(`--${name} needs a number, got ${String(v)}`);
    return n;
  }

  sizes(name: string, dflt: number[]): number[] {
    const v = this.values.get(name);
    if (v === undefined) return dflt;
    if (typeof v !== 'string') throw new Error(`--${name} needs a comma-separated list of sizes`);
    return v.split(',').map((s) => {
      const n = parseSize(s);
      if (!Number.isFinite(n) || n < 0) throw new Error(`--${name}: bad size "${s}"`);
      return n;
    });
  }

  /** Names given that are not in `known` (to report typos). */
  unknown(known: string[]): string[] {
    return [...this.values.keys()].filter((k) => !known.includes(k));
  }
}

/** "8", "1k"/"1KiB" = 1024, "4m"/"4MiB" = 4 Mi, "1g". */
export function parseSize(s: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kmg]?)(?:i?b)?$/i.exec(s.trim());
  if (!m) return Number.NaN;
  const mult = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[
    m[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'
  ];
  return Math.round(Number(m[1]) * mult);
}

export function formatSize(n: number): string {
  if (n >= 1024 ** 2 && n % 1024 ** 2 === 0) return `${n / 1024 ** 2} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} B`;
}

/** A subcommand of `ssi-bench`. */
export interface BenchCommand {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** Full help (options and what is measured). */
  usage: string;
  /** Run it; resolve to the exit code. */
  run(args: string[]): Promise<number>;
}
