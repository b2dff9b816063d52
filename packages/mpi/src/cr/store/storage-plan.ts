import { resolve } from 'node:path';
import { CheckpointStoreError } from './store-errors';

/**
 * How a series is made safe against the loss of a node (PSC's plans, seed 004):
 * - `local`: each rank's file only where it was written (the checkpoint directory);
 * - `duplicate` (Plan B2): every rank file also copied to a second location (a directory standing
 *   for the file server), after the rank has gone on; the series is complete once the copies are
 *   durable too;
 * - `parity` (Plan C1): ranks grouped in sets of `setSize` on different nodes where possible; the
 *   bitwise XOR of each set's files, computed by a reduction among the set's ranks, is written to
 *   the second location, so one lost file per set can be rebuilt.
 */
export type StoragePlanName = 'local' | 'duplicate' | 'parity';

export const STORAGE_PLANS: readonly StoragePlanName[] = ['local', 'duplicate', 'parity'];

/** A plan as mpirun's crlam half chose it, sent to every rank with the series. */
export type StoragePlan =
  | { name: 'local' }
  | {
      name: 'duplicate' /** absolute: the job's directory in the second location */;
      secondDir: string;
    }
  | { name: 'parity'; secondDir: string /** ranks per parity set, ≥ 2 */; setSize: number };

/** The raw settings of a plan and the names a user knows them by (for the error messages). */
export interface StoragePlanSettings {
  plan: string;
  secondDir: string;
  setSize: number;
  /** the parameter names, e.g. `{ plan: 'crlam_self_plan', … }` */
  names: { plan: string; secondDir: string; setSize: string };
  /** the primary checkpoint directory (the second location must be another one) */
  primaryDir: string;
}

/** Validates the settings; every error names the parameter, the bad value and what is expected. */
export function storagePlanOf(s: StoragePlanSettings): StoragePlan {
  const plan = s.plan.trim();
  if (!(STORAGE_PLANS as readonly string[]).includes(plan)) {
    throw new CheckpointStoreError(
      `${s.names.plan} ${JSON.stringify(s.plan)} is not a storage plan (expected one of ${STORAGE_PLANS.join(', ')})`,
    );
  }
  if (plan === 'local') return { name: 'local' };
  if (s.secondDir.trim() === '') {
    throw new CheckpointStoreError(
      `${s.names.plan} ${plan} needs ${s.names.secondDir}: the directory standing for the file server (a location other than the checkpoint directory)`,
    );
  }
  const secondDir = resolve(s.secondDir);
  const primary = resolve(s.primaryDir);
  if (
    secondDir === primary ||
    secondDir.startsWith(`${primary}/`) ||
    primary.startsWith(`${secondDir}/`)
  ) {
    throw new CheckpointStoreError(
      `${s.names.secondDir} ${secondDir} overlaps the checkpoint directory ${primary}: the second location must be a separate directory`,
    );
  }
  if (plan === 'duplicate') return { name: 'duplicate', secondDir };
  if (!Number.isSafeInteger(s.setSize) || s.setSize < 2) {
    throw new CheckpointStoreError(
      `${s.names.setSize} ${s.setSize} is not a parity set size (expected an integer ≥ 2: the ranks whose files share one parity file)`,
    );
  }
  return { name: 'parity', secondDir, setSize: s.setSize };
}

/**
 * The parity sets of a job: ranks taken one node at a time in turn (the first rank of each node,
 * then the second, …), cut into sets of `setSize`, so a set's ranks are on different nodes
 * whenever there are enough nodes. `nodeOf[r]` is rank r's node. Every rank is in one set; the
 * last set may be smaller.
 */
export function paritySets(nodeOf: readonly number[], setSize: number): number[][] {
  const byNode = new Map<number, number[]>();
  nodeOf.forEach((node, rank) => {
    const list = byNode.get(node) ?? [];
    list.push(rank);
    byNode.set(node, list);
  });
  const nodes = [...byNode.keys()].sort((a, b) => a - b);
  const order: number[] = [];
  for (let i = 0; order.length < nodeOf.length; i++) {
    for (const n of nodes) {
      const r = byNode.get(n)![i];
      if (r !== undefined) order.push(r);
    }
  }
  const sets: number[][] = [];
  for (let i = 0; i < order.length; i += setSize) sets.push(order.slice(i, i + setSize));
  return sets;
}
