import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CheckpointFileError,
  CheckpointStore,
  CheckpointStoreError,
  type RankFileRecord,
  type SeriesManifest,
} from '../src/index';

/** The checkpoint store on a private temporary directory per test (removed afterwards). */
let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'ssi-ckpt-store-'));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

const JOB = 'job-17';
const bytesOf = (text: string) => new TextEncoder().encode(text);

/** One rank's sections: the application's state and the MPI layer's, distinct per series/rank. */
function sectionsFor(series: number, rank: number) {
  return [
    { name: 'app', bytes: bytesOf(`state of rank ${rank} at series ${series}`) },
    { name: 'mpi', bytes: new Uint8Array([series, rank, 0, 255]) },
    { name: 'empty', bytes: new Uint8Array(0) },
  ];
}

function manifestOf(series: number, size: number, ranks: RankFileRecord[]): SeriesManifest {
  return {
    format: 1,
    series,
    jobId: JOB,
    size,
    module: 'self',
    createdAt: new Date().toISOString(),
    app: { parts: [{ argv: ['app.ts'], np: size }] },
    ranks,
  };
}

/** A series as a checkpoint writes it: a reserved number, every rank's file, then the manifest. */
async function writeSeries(store: CheckpointStore, size: number, commit = true, skip = -1) {
  const series = await store.nextSeries();
  const records: RankFileRecord[] = [];
  for (let rank = 0; rank < size; rank++) {
    if (rank === skip) continue;
    const meta = { jobId: JOB, size, module: 'self' };
    records.push(await store.writeRankFile(series, rank, sectionsFor(series, rank), meta));
  }
  if (commit) await store.commitSeries(manifestOf(series, size, records));
  return { series, records };
}

const rankPath = (series: number, rank: number) =>
  join(root, `series-${series}`, `rank-${rank}.ckpt`);

describe('CheckpointStore: writing and reading a series', () => {
  it('round-trips every rank file of a committed series, verified', async () => {
    const store = await CheckpointStore.open(join(root, 'ckpt', 'nested')); // mkdir -p
    const { series, records } = await writeSeries(store, 3);
    expect(series).toBe(1);
    expect(records.map((r) => r.file)).toEqual([
      'series-1/rank-0.ckpt',
      'series-1/rank-1.ckpt',
      'series-1/rank-2.ckpt',
    ]);
    const latest = await store.latestComplete();
    expect(latest?.series).toBe(1);
    expect(latest?.dir).toBe(join(root, 'ckpt', 'nested', 'series-1'));
    expect(latest?.manifest.ranks).toEqual(records);
    expect(latest?.manifest.app).toEqual({ parts: [{ argv: ['app.ts'], np: 3 }] });
    for (let rank = 0; rank < 3; rank++) {
      const file = await store.readRankFile(1, rank);
      expect(file.meta).toEqual({ jobId: JOB, series: 1, rank, size: 3, module: 'self' });
      expect([...file.sections.keys()]).toEqual(['app', 'mpi', 'empty']);
      for (const s of sectionsFor(1, rank)) expect(file.sections.get(s.name)).toEqual(s.bytes);
    }
    // The files are self-describing: the magic and the format version open each one.
    const raw = readFileSync(join(root, 'ckpt', 'nested', records[0]!.file));
    expect(raw.toString('latin1', 0, 8)).toBe('SSI-CKPT');
    expect(raw.readUInt32LE(8)).toBe(1);
    expect(raw.length).toBe(records[0]!.bytes);
  });

  it('numbers series from 1 + the highest present, complete or not, never twice', async () => {
    const store = await CheckpointStore.open(root);
    await writeSeries(store, 2);
    await writeSeries(store, 2, false); // series 2 never completes
    expect(await store.nextSeries()).toBe(3); // reserved even though nothing is written yet
    const concurrent = await Promise.all([
      store.nextSeries(),
      store.nextSeries(),
      store.nextSeries(),
    ]);
    expect(new Set(concurrent).size).toBe(3);
    expect(Math.min(...concurrent)).toBe(4);
  });

  it('refuses to commit a series that lacks a rank, and never counts it', async () => {
    const store = await CheckpointStore.open(root);
    await writeSeries(store, 3);
    const { series, records } = await writeSeries(store, 3, false, 1); // rank 1 killed mid checkpoint
    await expect(store.commitSeries(manifestOf(series, 3, records))).rejects.toThrow(
      /cannot commit series 2: no record for rank\(s\) 1 of 3/,
    );
    const forged = { rank: 1, file: 'series-2/rank-1.ckpt', bytes: 10, sha256: '00' };
    await expect(store.commitSeries(manifestOf(series, 3, [...records, forged]))).rejects.toThrow(
      `${rankPath(2, 1)} should have 10 bytes, it is missing`,
    );
    const [newest, older] = await store.examine();
    expect(newest).toEqual({
      series: 2,
      complete: false,
      reason: 'no MANIFEST.json (the checkpoint did not finish)',
    });
    expect(older?.complete).toBe(true);
    expect((await store.latestComplete())?.series).toBe(1);
    await expect(store.readRankFile(2, 1)).rejects.toThrow(`${rankPath(2, 1)}: missing`);
  });

  it('commits a series once, and its files cannot be replaced afterwards', async () => {
    const store = await CheckpointStore.open(root);
    const { series, records } = await writeSeries(store, 2);
    await expect(store.commitSeries(manifestOf(series, 2, records))).rejects.toThrow(
      /series 1 .* is already committed/,
    );
    await expect(
      store.writeRankFile(1, 0, sectionsFor(1, 0), { jobId: JOB, size: 2, module: 'self' }),
    ).rejects.toThrow(/already complete; its rank files cannot be replaced/);
  });
});

describe('CheckpointStore: damaged and incomplete series are never used', () => {
  it('rejects a flipped byte naming the file, and falls back to the previous series', async () => {
    const store = await CheckpointStore.open(root);
    await writeSeries(store, 2);
    await writeSeries(store, 2);
    const path = rankPath(2, 1);
    const bytes = readFileSync(path);
    const at = bytes.length - 40; // a byte of the body
    bytes[at] = bytes[at]! ^ 0x01;
    writeFileSync(path, bytes);
    const err = await store.readRankFile(2, 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CheckpointFileError);
    expect((err as Error).message).toBe(
      `${path}: checksum mismatch (file damaged or truncated); this series cannot be used`,
    );
    const [two, one] = await store.examine();
    expect(two).toEqual({
      series: 2,
      complete: false,
      reason: `${path}: checksum mismatch (file damaged or truncated)`,
    });
    expect(one?.complete).toBe(true);
    expect((await store.latestComplete())?.series).toBe(1);
  });

  it('rejects a truncated file, a foreign file and a file moved to another rank', async () => {
    const store = await CheckpointStore.open(root);
    await writeSeries(store, 3);
    const full = readFileSync(rankPath(1, 0));
    writeFileSync(rankPath(1, 0), full.subarray(0, full.length - 5));
    await expect(store.readRankFile(1, 0)).rejects.toThrow(
      /rank-0\.ckpt: length mismatch: its header says \d+ bytes, the file has \d+ \(file damaged or truncated\)/,
    );
    writeFileSync(rankPath(1, 1), 'hello, this is not a checkpoint at all, but long enough');
    await expect(store.readRankFile(1, 1)).rejects.toThrow(
      /rank-1\.ckpt: not a checkpoint rank file \(it does not start with "SSI-CKPT"\)/,
    );
    writeFileSync(rankPath(1, 2), full); // rank 0's intact file under rank 2's name
    await expect(store.readRankFile(1, 2)).rejects.toThrow(
      /rank-2\.ckpt: holds series 1 rank 0, expected series 1 rank 2 \(was the file moved\?\)/,
    );
    const version = Buffer.from(full);
    version.writeUInt32LE(7, 8);
    writeFileSync(rankPath(1, 2), version);
    await expect(store.readRankFile(1, 2)).rejects.toThrow(
      /rank file format version 7; this library reads version 1/,
    );
    expect(await store.latestComplete()).toBeNull();
  });

  it('does not use a committed series whose rank file has since disappeared', async () => {
    const store = await CheckpointStore.open(root);
    await writeSeries(store, 2);
    await writeSeries(store, 2);
    rmSync(rankPath(2, 0));
    expect((await store.examine())[0]?.reason).toBe(`${rankPath(2, 0)} is missing`);
    expect((await store.latestComplete())?.series).toBe(1);
  });

  it('never counts temporary files of an unfinished write', async () => {
    const store = await CheckpointStore.open(root);
    await writeSeries(store, 2);
    const { series, records } = await writeSeries(store, 2, false, 1);
    // Rank 1 died between write and rename: only its temporary file exists.
    const tempName = '.rank-1.ckpt.4242-x.tmp';
    writeFileSync(join(root, 'series-2', tempName), readFileSync(rankPath(2, 0)));
    writeFileSync(join(root, '.MANIFEST.json.99.tmp'), '{}');
    await expect(store.readRankFile(2, 1)).rejects.toThrow(/rank-1\.ckpt: missing/);
    await expect(store.commitSeries(manifestOf(series, 2, records))).rejects.toThrow(
      /no record for rank\(s\) 1/,
    );
    expect((await store.latestComplete())?.series).toBe(1);
    expect(await store.ignoredEntries()).toEqual([
      { name: '.MANIFEST.json.99.tmp', reason: 'a temporary file of an unfinished write' },
    ]);
    // A durable write leaves no temporary file behind.
    expect(readdirSync(join(root, 'series-1')).sort()).toEqual([
      'MANIFEST.json',
      'rank-0.ckpt',
      'rank-1.ckpt',
    ]);
  });
});

describe('CheckpointStore: pruning', () => {
  it('keeps the newest K complete series and the checkpoint in progress', async () => {
    const store = await CheckpointStore.open(root);
    await writeSeries(store, 2); // 1 complete
    await writeSeries(store, 2, false, 0); // 2 incomplete, older than the newest complete
    await writeSeries(store, 2); // 3 complete
    await writeSeries(store, 2); // 4 complete
    await writeSeries(store, 2, false, 1); // 5 in progress
    expect(await store.prune(2)).toEqual([1, 2]);
    expect(await store.seriesNumbers()).toEqual([5, 4, 3]);
    expect(await store.prune(1)).toEqual([3]);
    expect(await store.prune(1)).toEqual([]);
    expect(await store.seriesNumbers()).toEqual([5, 4]);
    expect((await store.latestComplete())?.series).toBe(4);
    expect(await store.nextSeries()).toBe(6); // numbers are not reused after a prune
  });

  it('removes nothing while no series is complete', async () => {
    const store = await CheckpointStore.open(root);
    await writeSeries(store, 2, false, 0);
    await writeSeries(store, 2, false, 1);
    expect(await store.prune(1)).toEqual([]);
    expect(await store.seriesNumbers()).toEqual([2, 1]);
  });

  it('does not count a damaged series as one of the K kept', async () => {
    const store = await CheckpointStore.open(root);
    await writeSeries(store, 2);
    await writeSeries(store, 2);
    await writeSeries(store, 2);
    writeFileSync(rankPath(2, 1), 'damaged');
    expect(await store.prune(2)).toEqual([2]); // 3 and 1 are the two complete ones
    expect(await store.seriesNumbers()).toEqual([3, 1]);
  });
});

describe('CheckpointStore: bad input', () => {
  it('ignores entries that are not series, with a reason, and never crashes on them', async () => {
    for (const name of ['series-abc', 'series-0', 'series-01', 'series-']) {
      mkdirSync(join(root, name));
    }
    writeFileSync(join(root, 'notes.txt'), 'mine');
    const store = await CheckpointStore.open(root);
    expect(await store.seriesNumbers()).toEqual([]);
    expect(await store.examine()).toEqual([]);
    expect(await store.latestComplete()).toBeNull();
    expect(await store.nextSeries()).toBe(1);
    const ignored = await store.ignoredEntries();
    expect(ignored.map((e) => e.name).sort()).toEqual([
      'notes.txt',
      'series-',
      'series-0',
      'series-01',
      'series-abc',
    ]);
    expect(ignored[0]?.reason).toBe('not a series directory (expected series-<n>, n ≥ 1)');
    await store.prune(1);
    expect(readdirSync(root).sort()).toContain('notes.txt'); // foreign files stay
  });

  it('says why a manifest cannot be used: wrong format, bad JSON, wrong series, a file', async () => {
    const store = await CheckpointStore.open(root);
    const { records } = await writeSeries(store, 2, false);
    const manifestPath = join(root, 'series-1', 'MANIFEST.json');
    writeFileSync(manifestPath, JSON.stringify({ ...manifestOf(1, 2, records), format: 2 }));
    expect((await store.examine())[0]?.reason).toBe(
      `${manifestPath}: manifest format 2; this library reads format 1`,
    );
    writeFileSync(manifestPath, '{"format": 1,');
    expect((await store.examine())[0]?.reason).toBe(`${manifestPath} is not valid JSON`);
    writeFileSync(manifestPath, JSON.stringify(manifestOf(9, 2, records)));
    expect((await store.examine())[0]?.reason).toBe(
      `${manifestPath}: the manifest is for series 9`,
    );
    writeFileSync(join(root, 'series-2'), 'a file where a series directory belongs');
    expect((await store.examine())[0]).toEqual({
      series: 2,
      complete: false,
      reason: `${join(root, 'series-2')} is not a directory`,
    });
    expect(await store.latestComplete()).toBeNull();
  });

  it('gives clear errors for bad arguments', async () => {
    const store = await CheckpointStore.open(root);
    const meta = { jobId: JOB, size: 2, module: 'self' };
    const sections = sectionsFor(1, 0);
    await expect(store.writeRankFile(0, 0, sections, meta)).rejects.toThrow(
      'series must be an integer ≥ 1 (got 0)',
    );
    await expect(store.writeRankFile(1, 2, sections, meta)).rejects.toThrow(
      'rank 2 is not a rank of a job of size 2 (expected 0..1)',
    );
    await expect(store.writeRankFile(1, 0, sections, { ...meta, jobId: '' })).rejects.toThrow(
      'jobId must be a non-empty string',
    );
    await expect(
      store.writeRankFile(1, 0, [...sections, { name: 'app', bytes: new Uint8Array(1) }], meta),
    ).rejects.toThrow('section "app" is given twice');
    await expect(
      store.writeRankFile(1, 0, [{ name: 'x', bytes: 'text' as unknown as Uint8Array }], meta),
    ).rejects.toThrow('section "x": bytes must be a Uint8Array');
    await expect(store.prune(0)).rejects.toThrow('keep must be an integer ≥ 1 (got 0)');
    const bad = { ...manifestOf(1, 2, []), format: 3 } as unknown as SeriesManifest;
    await expect(store.commitSeries(bad)).rejects.toThrow(
      'cannot commit series 1: manifest format 3; this library reads format 1',
    );
    writeFileSync(join(root, 'plain-file'), '');
    const notDir = await CheckpointStore.open(join(root, 'plain-file')).catch((e: unknown) => e);
    expect(notDir).toBeInstanceOf(CheckpointStoreError);
    expect((notDir as Error).message).toMatch(
      /plain-file.* (is not a directory|cannot be created)/,
    );
    await expect(CheckpointStore.open(join(root, 'plain-file', 'below'))).rejects.toThrow(
      /checkpoint directory .*plain-file\/below cannot be created/,
    );
  });
});
