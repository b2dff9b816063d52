import { rankFileName, seriesDirName } from './series-layout';

/** What the store knows of one rank's file once it is durable (the rank reports it to mpirun). */
export interface RankFileRecord {
  rank: number;
  /** relative to the checkpoint directory: `series-<n>/rank-<r>.ckpt` */
  file: string;
  /** the file's length */
  bytes: number;
  /** sha256 of the whole file, hex */
  sha256: string;
}

/**
 * `series-<n>/MANIFEST.json`, written by mpirun once every rank's file is durable. Its presence
 * (with every file it lists intact) is what makes a series complete.
 */
export interface SeriesManifest {
  format: 1;
  series: number;
  jobId: string;
  size: number;
  /** the cr module that took the checkpoint */
  module: string;
  /** ISO 8601 */
  createdAt: string;
  /** opaque to the store: mpirun's application schema, to relaunch the job */
  app: unknown;
  ranks: RankFileRecord[];
  /** how the series survives a lost file (absent: the `local` plan, no redundancy) */
  redundancy?: RedundancyRecord;
}

/** The redundancy of a series, recorded once it is durable (see `storage-plan.ts`). */
export type RedundancyRecord =
  | {
      plan: 'duplicate';
      /** the job's directory in the second location: copies at `series-<n>/rank-<r>.ckpt` */
      dir: string;
    }
  | { plan: 'parity'; dir: string; setSize: number; sets: ParitySetRecord[] };

/** One parity set: its ranks and the XOR of their files (zero-padded to the longest). */
export interface ParitySetRecord {
  set: number;
  ranks: number[];
  /** relative to the second location's job directory: `series-<n>/parity-<k>.xor` */
  file: string;
  bytes: number;
  sha256: string;
}

export const MANIFEST_FORMAT = 1;

export function rankFilePath(series: number, rank: number): string {
  return `${seriesDirName(series)}/${rankFileName(rank)}`;
}

/**
 * Why `value` is not a usable manifest of `series` (undefined when it is): the format, the
 * fields, and one record per rank 0..size-1 naming that rank's file.
 */
export function manifestProblem(value: unknown, series: number): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'the manifest is not a JSON object';
  }
  const m = value as Record<string, unknown>;
  if (m.format !== MANIFEST_FORMAT) {
    return `manifest format ${JSON.stringify(m.format)}; this library reads format ${MANIFEST_FORMAT}`;
  }
  if (m.series !== series) return `the manifest is for series ${JSON.stringify(m.series)}`;
  if (typeof m.jobId !== 'string' || m.jobId === '') return 'the manifest has no jobId';
  if (typeof m.module !== 'string' || m.module === '') return 'the manifest has no module';
  if (typeof m.createdAt !== 'string') return 'the manifest has no createdAt';
  if (!Number.isSafeInteger(m.size) || (m.size as number) < 1) {
    return `manifest size ${JSON.stringify(m.size)} is not a positive integer`;
  }
  if (!Array.isArray(m.ranks)) return 'the manifest has no list of ranks';
  return (
    recordsProblem(m.ranks, series, m.size as number) ??
    redundancyProblem(m.redundancy, m.size as number)
  );
}

/** A redundancy record, when present, is one of the plans' and (parity) covers every rank once. */
function redundancyProblem(value: unknown, size: number): string | undefined {
  if (value === undefined) return undefined;
  const r = value as Partial<RedundancyRecord> | null;
  if (typeof r?.dir !== 'string' || r.dir === '') return 'its redundancy record names no directory';
  if (r.plan === 'duplicate') return undefined;
  if (r.plan !== 'parity') {
    return `its redundancy record has plan ${JSON.stringify(r.plan)}, expected duplicate or parity`;
  }
  if (!Array.isArray(r.sets)) return 'its parity record has no list of sets';
  const covered = new Set<number>();
  for (const set of r.sets as Partial<ParitySetRecord>[]) {
    if (
      !Array.isArray(set?.ranks) ||
      typeof set.file !== 'string' ||
      !Number.isSafeInteger(set.bytes) ||
      typeof set.sha256 !== 'string'
    ) {
      return 'a parity set record lacks ranks, file, bytes or sha256';
    }
    for (const rank of set.ranks) {
      if (covered.has(rank)) return `rank ${rank} is in two parity sets`;
      covered.add(rank);
    }
  }
  if (covered.size !== size) return `the parity sets cover ${covered.size} of ${size} ranks`;
  return undefined;
}

/** Every rank 0..size-1 has exactly one well-formed record, naming its own file. */
export function recordsProblem(
  ranks: readonly unknown[],
  series: number,
  size: number,
): string | undefined {
  const seen = new Set<number>();
  for (const r of ranks) {
    const rec = r as Partial<RankFileRecord> | null;
    const rank = rec?.rank;
    if (!Number.isSafeInteger(rank) || (rank as number) < 0 || (rank as number) >= size) {
      return `a rank record names rank ${JSON.stringify(rank)}, expected 0..${size - 1}`;
    }
    if (seen.has(rank as number)) return `rank ${rank} is recorded twice`;
    seen.add(rank as number);
    if (rec!.file !== rankFilePath(series, rank as number)) {
      return `rank ${rank}'s record names file ${JSON.stringify(rec!.file)}, expected ${rankFilePath(series, rank as number)}`;
    }
    if (!Number.isSafeInteger(rec!.bytes) || typeof rec!.sha256 !== 'string') {
      return `rank ${rank}'s record lacks bytes or sha256`;
    }
  }
  const missing = [...Array(size).keys()].filter((r) => !seen.has(r));
  if (missing.length > 0) return `no record for rank(s) ${missing.join(', ')} of ${size}`;
  return undefined;
}
