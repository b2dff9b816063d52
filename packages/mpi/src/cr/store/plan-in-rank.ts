import { readFile } from 'node:fs/promises';
import type { ParitySetRecord } from './manifest';
import { type RankChannel, reduceParity } from './parity-reduction';
import { copyToSecondLocation, writeParityFile } from './second-location';
import { paritySets, type StoragePlan } from './storage-plan';

/** What a rank's cr module tells the plan about the file it has just written. */
export interface WrittenRankFile {
  plan: StoragePlan;
  series: number;
  rank: number;
  /** absolute path of the rank's durable file */
  path: string;
  /** the node of every rank of the job, by rank (parity sets span nodes) */
  nodeOf: readonly number[];
  /** messages to the other ranks during the checkpoint (parity's reduction) */
  channel: RankChannel;
}

/**
 * A rank's part of its storage plan while the job is held in the checkpoint, after its file is
 * durable: with `parity`, the set's reduction (every member takes part; the set's leader writes
 * the XOR to the second location and returns its record, for mpirun's manifest). Nothing to do
 * for `local` and `duplicate`.
 */
export async function protectInCheckpoint(
  w: WrittenRankFile,
): Promise<ParitySetRecord | undefined> {
  if (w.plan.name !== 'parity') return undefined;
  const sets = paritySets(w.nodeOf, w.plan.setSize);
  const index = sets.findIndex((s) => s.includes(w.rank));
  const set = sets[index]!;
  const xor = await reduceParity(set, w.rank, await readFile(w.path), w.channel);
  if (xor === null) return undefined;
  return writeParityFile(w.plan.secondDir, w.series, index, set, xor);
}

/**
 * A rank's part once it has gone on (Plan B2: the program is not held while its file travels):
 * with `duplicate`, copies the file to the second location. The series becomes complete when
 * mpirun has seen every copy (`redundancyOfSeries`). Resolves when the copy is durable.
 */
export async function protectAfterContinue(w: Omit<WrittenRankFile, 'channel' | 'nodeOf'>) {
  if (w.plan.name !== 'duplicate') return;
  await copyToSecondLocation(w.path, w.plan.secondDir, w.series, w.rank);
}
