/**
 * Names inside a checkpoint directory: `series-<n>/rank-<r>.ckpt` and `series-<n>/MANIFEST.json`.
 * Files being written carry a temporary name (a leading dot, `.tmp` at the end) and never count
 * as part of a series until they are renamed.
 */

export const MANIFEST_FILE = 'MANIFEST.json';

const SERIES_RE = /^series-([1-9][0-9]{0,8})$/;
const RANK_FILE_RE = /^rank-(0|[1-9][0-9]{0,8})\.ckpt$/;

export function seriesDirName(series: number): string {
  return `series-${series}`;
}

/** The series number of a directory name, or undefined when the name is not `series-<n>`. */
export function parseSeriesDirName(name: string): number | undefined {
  const m = SERIES_RE.exec(name);
  return m ? Number(m[1]) : undefined;
}

export function rankFileName(rank: number): string {
  return `rank-${rank}.ckpt`;
}

/** The parity file of parity set `set` (PSC's XOR file), in the second location's series directory. */
export function parityFileName(set: number): string {
  return `parity-${set}.xor`;
}

export function parseRankFileName(name: string): number | undefined {
  const m = RANK_FILE_RE.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** A temporary name next to `name`, unique to this process and call. */
export function tempNameFor(name: string): string {
  const unique = `${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  return `.${name}.${unique}.tmp`;
}

export function isTempName(name: string): boolean {
  return name.startsWith('.') && name.endsWith('.tmp');
}
