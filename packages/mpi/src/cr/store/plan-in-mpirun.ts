import { rm } from 'node:fs/promises';
import type { ParitySetRecord, RankFileRecord, RedundancyRecord } from './manifest';
import { awaitCopies, secondSeriesDir } from './second-location';
import type { StoragePlan } from './storage-plan';
import { CheckpointStoreError } from './store-errors';

/** A rank's report of its saved file, with the parity record when it led a parity set. */
export type SavedRankFile = RankFileRecord & { parity?: ParitySetRecord };

/**
 * Whether the ranks go on before the series is committed: with `duplicate` they do (the copies
 * are made after they continue, and the manifest waits for them); otherwise the manifest is
 * written while they are held, as before.
 */
export function continuesBeforeCommit(plan: StoragePlan): boolean {
  return plan.name === 'duplicate';
}

/**
 * mpirun's side of a plan, before the manifest is written: what it records of the series's
 * redundancy, once that redundancy is durable. `duplicate` waits (up to `copyTimeoutMs`) for every
 * rank's copy; `parity` checks that every set's leader reported its XOR file. Rejects, naming
 * what is missing, when the series cannot be made complete.
 */
export async function redundancyOfSeries(
  plan: StoragePlan,
  series: number,
  ranks: readonly SavedRankFile[],
  copyTimeoutMs: number,
): Promise<RedundancyRecord | undefined> {
  if (plan.name === 'local') return undefined;
  if (plan.name === 'duplicate') {
    await awaitCopies(plan.secondDir, series, ranks, copyTimeoutMs);
    return { plan: 'duplicate', dir: plan.secondDir };
  }
  const sets = ranks.flatMap((r) => (r.parity ? [r.parity] : [])).sort((a, b) => a.set - b.set);
  const covered = new Set(sets.flatMap((s) => s.ranks));
  const uncovered = ranks.map((r) => r.rank).filter((r) => !covered.has(r));
  if (uncovered.length > 0) {
    throw new CheckpointStoreError(
      `no parity file covers rank(s) ${uncovered.join(', ')} of series ${series}`,
    );
  }
  return { plan: 'parity', dir: plan.secondDir, setSize: plan.setSize, sets };
}

/** The rank record as the manifest keeps it (the parity record goes to the redundancy part). */
export function rankRecordOf(r: SavedRankFile): RankFileRecord {
  return { rank: r.rank, file: r.file, bytes: r.bytes, sha256: r.sha256 };
}

/** The keep rule removed these series from the checkpoint directory: remove their redundancy too. */
export async function pruneRedundancy(plan: StoragePlan, pruned: readonly number[]): Promise<void> {
  if (plan.name === 'local') return;
  for (const n of pruned) {
    await rm(secondSeriesDir(plan.secondDir, n), { recursive: true, force: true });
  }
}
