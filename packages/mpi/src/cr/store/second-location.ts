import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { copyFileDurably, writeFileDurably } from './durable-write';
import { sha256Of, sha256OfFile } from './file-digest';
import type { ParitySetRecord, RankFileRecord } from './manifest';
import { parityFileName, rankFileName, seriesDirName } from './series-layout';
import { CheckpointStoreError } from './store-errors';

/**
 * The second location of a job's checkpoints (the directory standing for PSC's file server):
 * `<second dir>/<job id>/series-<n>/rank-<r>.ckpt` (duplicate) or `…/series-<n>/parity-<k>.xor`
 * (parity). Written by the ranks, waited for by mpirun, read by a restart that rebuilds a file.
 */
export function secondSeriesDir(jobDir: string, series: number): string {
  return join(jobDir, seriesDirName(series));
}

/** Copies a rank's durable file to the second location (Plan B2's migration), durably. */
export async function copyToSecondLocation(
  rankFile: string,
  jobDir: string,
  series: number,
  rank: number,
): Promise<string> {
  const dir = secondSeriesDir(jobDir, series);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const to = join(dir, rankFileName(rank));
  await copyFileDurably(rankFile, to);
  return to;
}

/** Writes a parity set's XOR durably (Plan C1's XOR file) and says what the manifest records. */
export async function writeParityFile(
  jobDir: string,
  series: number,
  set: number,
  ranks: readonly number[],
  xor: Uint8Array,
): Promise<ParitySetRecord> {
  const dir = secondSeriesDir(jobDir, series);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFileDurably(join(dir, parityFileName(set)), xor);
  return {
    set,
    ranks: [...ranks],
    file: `${seriesDirName(series)}/${parityFileName(set)}`,
    bytes: xor.length,
    sha256: sha256Of(xor),
  };
}

/**
 * Waits until every rank's copy is in the second location with the length and sha256 of its
 * original (a copy appears only when durable: it is renamed into place after fsync). Rejects at
 * the deadline naming the copies still missing.
 */
export async function awaitCopies(
  jobDir: string,
  series: number,
  ranks: readonly RankFileRecord[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const left = new Map(ranks.map((r) => [r.rank, r]));
  for (;;) {
    for (const [rank, rec] of left) {
      if (await copyMatches(join(secondSeriesDir(jobDir, series), rankFileName(rank)), rec)) {
        left.delete(rank);
      }
    }
    if (left.size === 0) return;
    if (Date.now() >= deadline) {
      throw new CheckpointStoreError(
        `the copies of rank(s) ${[...left.keys()].join(', ')} did not reach ${secondSeriesDir(jobDir, series)} within ${timeoutMs} ms`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function copyMatches(path: string, rec: RankFileRecord): Promise<boolean> {
  const size = await stat(path).then(
    (s) => s.size,
    () => -1,
  );
  return size === rec.bytes && (await sha256OfFile(path)) === rec.sha256;
}
