import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CheckpointStore,
  CheckpointStoreError,
  chooseRestartSeries,
  PARITY_CHUNK_BYTES,
  paritySets,
  protectAfterContinue,
  protectInCheckpoint,
  type RankChannel,
  type RedundancyRecord,
  rankRecordOf,
  reduceParity,
  redundancyOfSeries,
  type SavedRankFile,
  type StoragePlan,
  storagePlanOf,
} from '../src/index';

/**
 * The checkpoint store's storage plans (PSC's Plans B2 and C1) without processes: validation,
 * parity sets, the XOR reduction over an in-memory channel between concurrent "ranks", the
 * mpirun side's wait for redundancy, and a restart's rebuild or refusal. The same paths run in
 * real jobs in plugins/cr-self/test/storage-plans*.test.ts.
 */
let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'ssi-ckpt-plans-'));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

const names = { plan: 'p_plan', secondDir: 'p_second', setSize: 'p_set' };

describe('storagePlanOf: the parameters', () => {
  const base = { secondDir: '', setSize: 4, names, primaryDir: '/ck' };
  it('accepts the three plans', () => {
    expect(storagePlanOf({ ...base, plan: 'local' })).toEqual({ name: 'local' });
    expect(storagePlanOf({ ...base, plan: 'duplicate', secondDir: '/fs' })).toEqual({
      name: 'duplicate',
      secondDir: '/fs',
    });
    expect(storagePlanOf({ ...base, plan: 'parity', secondDir: '/fs', setSize: 3 })).toEqual({
      name: 'parity',
      secondDir: '/fs',
      setSize: 3,
    });
  });
  it('rejects bad values naming the parameter and what is expected', () => {
    expect(() => storagePlanOf({ ...base, plan: 'raid5' })).toThrow(
      'p_plan "raid5" is not a storage plan (expected one of local, duplicate, parity)',
    );
    expect(() => storagePlanOf({ ...base, plan: 'duplicate' })).toThrow(
      'p_plan duplicate needs p_second: the directory standing for the file server',
    );
    expect(() => storagePlanOf({ ...base, plan: 'parity', secondDir: '/ck/sub' })).toThrow(
      'p_second /ck/sub overlaps the checkpoint directory /ck: the second location must be a separate directory',
    );
    expect(() => storagePlanOf({ ...base, plan: 'parity', secondDir: '/fs', setSize: 1 })).toThrow(
      'p_set 1 is not a parity set size (expected an integer ≥ 2',
    );
  });
});

describe('paritySets', () => {
  it('puts a set on different nodes when there are enough', () => {
    // ranks 0,1 on node 0 and 2,3 on node 1 (mpirun's default placement by node)
    expect(paritySets([0, 0, 1, 1], 2)).toEqual([
      [0, 2],
      [1, 3],
    ]);
    expect(paritySets([0, 0, 1, 1, 2, 2], 3)).toEqual([
      [0, 2, 4],
      [1, 3, 5],
    ]);
  });
  it('on one node: consecutive ranks, the last set smaller', () => {
    expect(paritySets([0, 0, 0, 0, 0], 2)).toEqual([[0, 1], [2, 3], [4]]);
  });
});

/** Channels between in-process "ranks": per (from, to) a queue of messages in order. */
function channels(size: number): RankChannel[] {
  const queues = new Map<string, { items: Uint8Array[]; waiters: ((b: Uint8Array) => void)[] }>();
  const q = (from: number, to: number) => {
    const k = `${from}>${to}`;
    if (!queues.has(k)) queues.set(k, { items: [], waiters: [] });
    return queues.get(k)!;
  };
  return Array.from({ length: size }, (_, me) => ({
    async send(to, bytes) {
      const box = q(me, to);
      const copy = Uint8Array.from(bytes); // a real channel copies too
      const w = box.waiters.shift();
      if (w) w(copy);
      else box.items.push(copy);
    },
    recv(from) {
      const box = q(from, me);
      const item = box.items.shift();
      if (item) return Promise.resolve(item);
      return new Promise((resolve) => box.waiters.push(resolve));
    },
  }));
}

function randomBytes(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n);
  let x = seed * 2654435761;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

describe('reduceParity', () => {
  it('gives the set leader the XOR of every member, zero-padded, over several chunks', async () => {
    const lengths = [PARITY_CHUNK_BYTES * 2 + 17, 5, PARITY_CHUNK_BYTES + 3];
    const files = lengths.map((n, i) => randomBytes(n, i + 1));
    const ch = channels(3);
    const results = await Promise.all(
      [0, 1, 2].map((r) => reduceParity([0, 1, 2], r, files[r]!, ch[r]!)),
    );
    expect(results[1]).toBeNull();
    expect(results[2]).toBeNull();
    const expected = Buffer.alloc(Math.max(...lengths));
    for (const f of files) for (let i = 0; i < f.length; i++) expected[i]! ^= f[i]!;
    expect(results[0]!.equals(expected)).toBe(true);
  });
});

/** A series of `size` ranks written and committed with `plan`, through the plan's own steps. */
async function seriesWith(plan: StoragePlan, size: number, nodeOf: number[]) {
  const store = await CheckpointStore.open(join(root, 'ckpt'));
  const n = await store.nextSeries();
  const ch = channels(size);
  const saved: SavedRankFile[] = await Promise.all(
    Array.from({ length: size }, async (_, rank) => {
      const sections = [{ name: 'app', bytes: randomBytes(1000 + 333 * rank, rank + 7) }];
      const rec = await store.writeRankFile(n, rank, sections, {
        jobId: 'j',
        size,
        module: 'self',
      });
      const path = join(store.dir, rec.file);
      const w = { plan, series: n, rank, path };
      const parity = await protectInCheckpoint({ ...w, nodeOf, channel: ch[rank]! });
      await protectAfterContinue(w);
      return parity ? { ...rec, parity } : rec;
    }),
  );
  const redundancy = await redundancyOfSeries(plan, n, saved, 5000);
  await store.commitSeries({
    format: 1,
    series: n,
    jobId: 'j',
    size,
    module: 'self',
    createdAt: '2026-11-25T00:00:00.000Z',
    app: {},
    ranks: saved.map(rankRecordOf),
    ...(redundancy ? { redundancy } : {}),
  });
  return { store, n, file: (r: number) => join(store.dir, `series-${n}`, `rank-${r}.ckpt`) };
}

function flip(file: string): void {
  const b = readFileSync(file);
  b[b.length >> 1]! ^= 0x10;
  writeFileSync(file, b);
}

const second = () => join(root, 'fileserver', 'j');

describe('restart: rebuild from the plan, or refuse', () => {
  it('duplicate: a deleted and a corrupt file are rebuilt from the copies, one line each', async () => {
    const { store, file } = await seriesWith(
      { name: 'duplicate', secondDir: second() },
      3,
      [0, 0, 0],
    );
    const original = [readFileSync(file(0)), readFileSync(file(2))];
    unlinkSync(file(0));
    flip(file(2));
    const said: string[] = [];
    const chosen = await chooseRestartSeries(store, (l) => said.push(l));
    expect(chosen.series).toBe(1);
    expect(said).toEqual([
      `series 1: rebuilt rank 0's file ${file(0)} (missing) from the duplicate ${join(second(), 'series-1', 'rank-0.ckpt')}`,
      `series 1: rebuilt rank 2's file ${file(2)} (checksum mismatch (file damaged or truncated)) from the duplicate ${join(second(), 'series-1', 'rank-2.ckpt')}`,
    ]);
    expect(readFileSync(file(0)).equals(original[0]!)).toBe(true);
    expect(readFileSync(file(2)).equals(original[1]!)).toBe(true);
    expect((await store.examine())[0]!.complete).toBe(true);
  });

  it('parity: one lost file per set is rebuilt by XOR; the manifest records the sets', async () => {
    const plan: StoragePlan = { name: 'parity', secondDir: second(), setSize: 2 };
    const { store, file } = await seriesWith(plan, 4, [0, 0, 1, 1]);
    const red = (await store.examine())[0]!.manifest!.redundancy as Extract<
      RedundancyRecord,
      { plan: 'parity' }
    >;
    expect(red.sets.map((s) => s.ranks)).toEqual([
      [0, 2],
      [1, 3],
    ]);
    const lost = [readFileSync(file(2)), readFileSync(file(3))];
    // node 1's files (ranks 2 and 3): one per set
    unlinkSync(file(2));
    flip(file(3));
    const said: string[] = [];
    await chooseRestartSeries(store, (l) => said.push(l));
    const p = (k: number) => join(second(), 'series-1', `parity-${k}.xor`);
    expect(said).toEqual([
      `series 1: rebuilt rank 2's file ${file(2)} (missing) from parity set 0 (${p(0)} XOR the files of rank(s) 0)`,
      `series 1: rebuilt rank 3's file ${file(3)} (checksum mismatch (file damaged or truncated)) from parity set 1 (${p(1)} XOR the files of rank(s) 1)`,
    ]);
    expect(readFileSync(file(2)).equals(lost[0]!)).toBe(true);
    expect(readFileSync(file(3)).equals(lost[1]!)).toBe(true);
  });

  it('parity: two lost files in one set are refused, naming both and the older series', async () => {
    const plan: StoragePlan = { name: 'parity', secondDir: second(), setSize: 2 };
    await seriesWith(plan, 4, [0, 0, 1, 1]);
    const { store, file } = await seriesWith(plan, 4, [0, 0, 1, 1]);
    unlinkSync(file(0));
    unlinkSync(file(2));
    const err = await chooseRestartSeries(store, () => {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CheckpointStoreError);
    expect((err as Error).message).toBe(
      `series 2 cannot be restored: rank 0's file ${file(0)} is lost (missing), and rank(s) 2 of its parity set (ranks 0, 2) are lost too: one parity file rebuilds one lost file per set; ` +
        `rank 2's file ${file(2)} is lost (missing), and rank(s) 0 of its parity set (ranks 0, 2) are lost too: one parity file rebuilds one lost file per set. ` +
        `The older series 1 is complete and would do: mpirun --cr-restart ${store.seriesDir(1)}`,
    );
    // the refused attempt wrote nothing in place of the lost files
    expect(existsSync(file(0)) || existsSync(file(2))).toBe(false);
  });

  it('local: a lost file is refused; with no older series the message says so', async () => {
    const { store, file } = await seriesWith({ name: 'local' }, 2, [0, 0]);
    unlinkSync(file(1));
    await expect(chooseRestartSeries(store, () => {})).rejects.toThrow(
      `series 1 cannot be restored: rank 1's file ${file(1)} is lost (missing), and the series was taken with the local plan (no duplicate, no parity). No older series would do: none is complete.`,
    );
  });

  it('duplicate: the copy lost too is refused, naming the copy', async () => {
    const { store, file } = await seriesWith({ name: 'duplicate', secondDir: second() }, 2, [0, 0]);
    unlinkSync(file(1));
    const copy = join(second(), 'series-1', 'rank-1.ckpt');
    unlinkSync(copy);
    await expect(chooseRestartSeries(store, () => {})).rejects.toThrow(
      `rank 1's file ${file(1)} is lost (missing), and its duplicate ${copy} is lost too (missing)`,
    );
  });

  it('duplicate: mpirun does not commit until every copy is there (names the missing ones)', async () => {
    const store = await CheckpointStore.open(join(root, 'ckpt'));
    const n = await store.nextSeries();
    const rec = await store.writeRankFile(n, 0, [{ name: 'a', bytes: new Uint8Array(9) }], {
      jobId: 'j',
      size: 1,
      module: 'self',
    });
    const plan: StoragePlan = { name: 'duplicate', secondDir: second() };
    await expect(redundancyOfSeries(plan, n, [rec], 200)).rejects.toThrow(
      `the copies of rank(s) 0 did not reach ${join(second(), 'series-1')} within 200 ms`,
    );
  });
});
