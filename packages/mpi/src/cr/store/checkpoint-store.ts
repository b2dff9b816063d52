import { constants } from 'node:fs';
import { access, mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { syncDirectory, writeFileDurably } from './durable-write';
import { sha256Of } from './file-digest';
import {
  manifestProblem,
  type RankFileRecord,
  rankFilePath,
  type SeriesManifest,
} from './manifest';
import {
  decodeRankFile,
  encodeRankFile,
  type RankFile,
  type RankFileSection,
} from './rank-file-format';
import { checkSeries, type SeriesStatus } from './series-check';
import {
  isTempName,
  MANIFEST_FILE,
  parseSeriesDirName,
  rankFileName,
  seriesDirName,
} from './series-layout';
import { CheckpointFileError, CheckpointStoreError } from './store-errors';

/** Who wrote a rank file (the series and rank come from where it is written). */
export interface RankFileWriter {
  jobId: string;
  size: number;
  /** the cr module taking the checkpoint */
  module: string;
}

/** A complete, verified series: what a restart uses. */
export interface CompleteSeries {
  series: number;
  manifest: SeriesManifest;
  /** absolute path of `series-<n>` */
  dir: string;
}

/** An entry of the checkpoint directory that is not a series, and why it is left alone. */
export interface IgnoredEntry {
  name: string;
  reason: string;
}

/**
 * A checkpoint directory (PSC's checkpoint sets, seed 004): one file per rank per series number,
 * `<dir>/series-<n>/rank-<r>.ckpt`, and `series-<n>/MANIFEST.json` written by mpirun last. A
 * series is complete only when its manifest is present and every file it lists is intact; only a
 * complete series is ever used. Series numbers are never reused.
 */
export class CheckpointStore {
  private constructor(
    /** the checkpoint directory, absolute */
    readonly dir: string,
  ) {}

  /**
   * Opens a checkpoint directory this user can write, creating it and its parents unless
   * `create: false` (a restart reads an existing one: a mistyped path is an error, not a new store).
   */
  static async open(dir: string, opts: { create?: boolean } = {}): Promise<CheckpointStore> {
    if (typeof dir !== 'string' || dir === '') {
      throw new CheckpointStoreError('a checkpoint directory must be a non-empty path');
    }
    const abs = resolve(dir);
    try {
      if (opts.create === false) await stat(abs);
      else await mkdir(abs, { recursive: true, mode: 0o700 });
    } catch (err) {
      if (opts.create === false) {
        throw new CheckpointStoreError(`checkpoint directory ${abs} does not exist`);
      }
      throw new CheckpointStoreError(
        `checkpoint directory ${abs} cannot be created: ${(err as Error).message}`,
      );
    }
    if (!(await stat(abs)).isDirectory()) {
      throw new CheckpointStoreError(`checkpoint directory ${abs} is not a directory`);
    }
    try {
      await access(abs, constants.R_OK | constants.W_OK | constants.X_OK);
    } catch {
      throw new CheckpointStoreError(
        `checkpoint directory ${abs} is not writable by this user (expected a directory you own)`,
      );
    }
    return new CheckpointStore(abs);
  }

  /** The series numbers present (complete or not), newest first. */
  async seriesNumbers(): Promise<number[]> {
    const names = await readdir(this.dir);
    const numbers = names.map(parseSeriesDirName).filter((n): n is number => n !== undefined);
    return numbers.sort((a, b) => b - a);
  }

  /** Entries that are not series directories: left alone by every operation, and said why. */
  async ignoredEntries(): Promise<IgnoredEntry[]> {
    const names = await readdir(this.dir);
    return names
      .filter((n) => parseSeriesDirName(n) === undefined)
      .map((name) => ({
        name,
        reason: isTempName(name)
          ? 'a temporary file of an unfinished write'
          : 'not a series directory (expected series-<n>, n ≥ 1)',
      }));
  }

  /**
   * Reserves the next series number, 1 + the highest present (complete or not), by creating its
   * directory: two callers never get the same number, and a number is never used twice.
   */
  async nextSeries(): Promise<number> {
    let n = ((await this.seriesNumbers())[0] ?? 0) + 1;
    for (;;) {
      try {
        await mkdir(this.seriesDir(n), { mode: 0o700 });
        await syncDirectory(this.dir);
        return n;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        n++;
      }
    }
  }

  /** `<dir>/series-<n>`. */
  seriesDir(series: number): string {
    return join(this.dir, seriesDirName(series));
  }

  /** Writes one rank's file of a series durably and says what the manifest must record of it. */
  async writeRankFile(
    series: number,
    rank: number,
    sections: readonly RankFileSection[],
    writer: RankFileWriter,
  ): Promise<RankFileRecord> {
    checkSeriesNumber(series);
    checkWriter(writer);
    checkRank(rank, writer.size);
    const dir = this.seriesDir(series);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (await exists(join(dir, MANIFEST_FILE))) {
      throw new CheckpointStoreError(
        `series ${series} in ${this.dir} is already complete; its rank files cannot be replaced`,
      );
    }
    const meta = { jobId: writer.jobId, series, rank, size: writer.size, module: writer.module };
    const bytes = encodeRankFile(meta, sections);
    await writeFileDurably(join(dir, rankFileName(rank)), bytes);
    return { rank, file: rankFilePath(series, rank), bytes: bytes.length, sha256: sha256Of(bytes) };
  }

  /** Reads one rank's file back, verified (magic, version, length, checksum, place). */
  async readRankFile(series: number, rank: number): Promise<RankFile> {
    checkSeriesNumber(series);
    const path = join(this.seriesDir(series), rankFileName(rank));
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (err) {
      const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
      throw new CheckpointFileError(path, missing ? 'missing' : (err as Error).message);
    }
    return decodeRankFile(bytes, path, { series, rank });
  }

  /**
   * Makes a series complete: writes its manifest durably, once, and only when it records every
   * rank 0..size-1 and each recorded file is present with its recorded length.
   */
  async commitSeries(manifest: SeriesManifest): Promise<void> {
    const series = manifest?.series;
    checkSeriesNumber(series);
    const problem = manifestProblem(manifest, series);
    if (problem) throw new CheckpointStoreError(`cannot commit series ${series}: ${problem}`);
    const path = join(this.seriesDir(series), MANIFEST_FILE);
    if (await exists(path)) {
      throw new CheckpointStoreError(`series ${series} in ${this.dir} is already committed`);
    }
    for (const rec of manifest.ranks) {
      const file = join(this.dir, rec.file);
      const size = await stat(file).then(
        (s) => s.size,
        () => undefined,
      );
      if (size !== rec.bytes) {
        const found = size === undefined ? 'it is missing' : `it has ${size} bytes`;
        throw new CheckpointStoreError(
          `cannot commit series ${series}: ${file} should have ${rec.bytes} bytes, ${found}`,
        );
      }
    }
    await writeFileDurably(path, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
  }

  /** Every series, newest first, verified: complete, or the reason it cannot be used. */
  async examine(): Promise<SeriesStatus[]> {
    const out: SeriesStatus[] = [];
    for (const n of await this.seriesNumbers()) out.push(await checkSeries(this.dir, n));
    return out;
  }

  /** The newest complete, verified series, or null when there is none. */
  async latestComplete(): Promise<CompleteSeries | null> {
    for (const n of await this.seriesNumbers()) {
      const status = await checkSeries(this.dir, n);
      if (status.complete) return { series: n, manifest: status.manifest!, dir: this.seriesDir(n) };
    }
    return null;
  }

  /**
   * Keeps the newest `keep` complete series; removes older complete ones and every incomplete
   * series older than the newest complete one. Incomplete series newer than that (a checkpoint
   * in progress) stay. Returns the removed numbers, ascending.
   */
  async prune(keep: number): Promise<number[]> {
    if (!Number.isSafeInteger(keep) || keep < 1) {
      throw new CheckpointStoreError(`keep must be an integer ≥ 1 (got ${keep})`);
    }
    const statuses = await this.examine();
    const newestComplete = statuses.find((s) => s.complete)?.series;
    if (newestComplete === undefined) return [];
    let completeSeen = 0;
    const remove: number[] = [];
    for (const s of statuses) {
      if (s.complete) {
        if (++completeSeen > keep) remove.push(s.series);
      } else if (s.series < newestComplete) remove.push(s.series);
    }
    for (const n of remove) await rm(this.seriesDir(n), { recursive: true, force: true });
    if (remove.length > 0) await syncDirectory(this.dir);
    return remove.sort((a, b) => a - b);
  }
}

function checkSeriesNumber(series: unknown): asserts series is number {
  if (!Number.isSafeInteger(series) || (series as number) < 1) {
    throw new CheckpointStoreError(`series must be an integer ≥ 1 (got ${JSON.stringify(series)})`);
  }
}

function checkRank(rank: unknown, size: number): void {
  if (!Number.isSafeInteger(rank) || (rank as number) < 0 || (rank as number) >= size) {
    throw new CheckpointStoreError(
      `rank ${JSON.stringify(rank)} is not a rank of a job of size ${size} (expected 0..${size - 1})`,
    );
  }
}

function checkWriter(w: RankFileWriter): void {
  if (typeof w?.jobId !== 'string' || w.jobId === '') {
    throw new CheckpointStoreError('jobId must be a non-empty string');
  }
  if (typeof w.module !== 'string' || w.module === '') {
    throw new CheckpointStoreError('module must name the cr module (a non-empty string)');
  }
  if (!Number.isSafeInteger(w.size) || w.size < 1) {
    throw new CheckpointStoreError(`size must be an integer ≥ 1 (got ${JSON.stringify(w.size)})`);
  }
}

function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
