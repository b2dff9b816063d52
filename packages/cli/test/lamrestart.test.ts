import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore, CheckpointStoreError, type RankFileRecord } from '@ssi/mpi';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../src/commands/lamrestart';
import { UsageError } from '../src/run-command';
import { runCli } from '../src/testing';

/**
 * lamrestart's front half: which series it restarts from and what it says about the others. The
 * hand-over to mpirun is injected (mpirun's `--cr-restart` is the cr framework's part); one run
 * of the built command checks the entry point and its exit status.
 */
let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'ssi-lamrestart-'));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

/** Writes a series of `size` ranks; `commit` false leaves it as a checkpoint that died. */
async function series(store: CheckpointStore, size: number, commit = true): Promise<number> {
  const n = await store.nextSeries();
  const ranks: RankFileRecord[] = [];
  for (let rank = 0; rank < size; rank++) {
    const sections = [{ name: 'app', bytes: new Uint8Array([n, rank]) }];
    ranks.push(await store.writeRankFile(n, rank, sections, { jobId: 'j1', size, module: 'self' }));
  }
  const createdAt = `2026-11-24T10:0${n}:00.000Z`;
  const manifest = { format: 1, series: n, jobId: 'j1', size, module: 'self', app: {} } as const;
  if (commit) await store.commitSeries({ ...manifest, createdAt, ranks });
  return n;
}

/** Runs lamrestart's main with a recording hand-over; returns what it said and handed over. */
async function restart(argv: string[], status = 0) {
  const said: string[] = [];
  const handed: string[][] = [];
  const code = await main(
    argv,
    async (args) => {
      handed.push(args);
      return status;
    },
    (line) => said.push(line),
  );
  return { code, said, handed };
}

describe('lamrestart: choosing the series', () => {
  it('uses the latest complete series and says why newer unfinished ones were skipped', async () => {
    const store = await CheckpointStore.open(root);
    await series(store, 2); // 1 complete, older
    await series(store, 2); // 2 complete: the one to use
    await series(store, 2, false); // 3: a rank died mid checkpoint
    const r = await restart([root, '--ssi', 'rpi', 'crtcp', 'n0-1'], 7);
    expect(r.handed).toEqual([
      ['--cr-restart', join(root, 'series-2'), '--ssi', 'rpi', 'crtcp', 'n0-1'],
    ]);
    expect(r.code).toBe(7); // mpirun's status is lamrestart's
    expect(r.said).toEqual([
      'lamrestart: skipping series 3: no MANIFEST.json (the checkpoint did not finish)',
      'lamrestart: restarting job j1 (2 rank(s), cr module self) from series 2 of 2026-11-24T10:02:00.000Z',
    ]);
  });

  it('refuses a committed series with a damaged file (local plan), naming the file and the older series that would do', async () => {
    const store = await CheckpointStore.open(root);
    await series(store, 2); // 1 complete, older
    await series(store, 2); // 2 complete: would do
    await series(store, 2); // 3: damaged afterwards
    const recorded = (await store.examine())[0]!.manifest!.ranks[1]!.bytes;
    writeFileSync(join(root, 'series-3', 'rank-1.ckpt'), 'flipped');
    const err = await restart([root]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CheckpointStoreError);
    expect((err as Error).message).toBe(
      `series 3 cannot be restored: rank 1's file ${join(root, 'series-3', 'rank-1.ckpt')} is lost (7 bytes, the manifest records ${recorded} (file damaged or truncated)), and the series was taken with the local plan (no duplicate, no parity). The older series 2 is complete and would do: mpirun --cr-restart ${join(root, 'series-2')}`,
    );
  });

  it('fails clearly when no series is complete, and hands nothing over', async () => {
    const store = await CheckpointStore.open(root);
    await series(store, 3, false);
    const err = await restart([root]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CheckpointStoreError);
    expect((err as Error).message).toBe(
      `no complete checkpoint series in ${root}: series 1: no MANIFEST.json (the checkpoint did not finish)`,
    );
  });

  it('fails clearly for a directory without series, and for one that does not exist', async () => {
    writeFileSync(join(root, 'notes.txt'), 'not a checkpoint');
    await expect(restart([root])).rejects.toThrow(
      `${root} holds no checkpoint series (expected series-<n> directories written by a checkpointed job)`,
    );
    const missing = join(root, 'typo');
    await expect(restart([missing])).rejects.toThrow(
      `checkpoint directory ${missing} does not exist`,
    );
    expect(existsSync(missing)).toBe(false); // a restart never creates a store
  });

  it('rejects a missing directory argument or an option in its place (usage, exit 2)', async () => {
    const none = await restart([]).catch((e: unknown) => e);
    expect(none).toBeInstanceOf(UsageError);
    expect((none as UsageError).exitCode).toBe(2);
    expect((none as Error).message).toMatch(/^which checkpoint directory\?\nusage: lamrestart/);
    await expect(restart(['-np', '4'])).rejects.toThrow(
      'the checkpoint directory comes first (got -np)',
    );
  });

  it('runs as a command: the message and exit status of a directory without series', async () => {
    const r = await runCli('lamrestart', [root], process.env, { timeoutMs: 30_000 });
    expect(r.stderr).toBe(
      `lamrestart: ${root} holds no checkpoint series (expected series-<n> directories written by a checkpointed job)\n`,
    );
    expect(r.code).toBe(1);
    const usage = await runCli('lamrestart', [], process.env, { timeoutMs: 30_000 });
    expect(usage.code).toBe(2);
  });
});
