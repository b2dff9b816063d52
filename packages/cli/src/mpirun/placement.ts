import { resolveNodeSpec, type UniverseNode } from '@ssi/lam';
import { UsageError } from '../run-command';
import type { JobPart } from './args';

/** One process of the job: its rank, its node, and the part of the job it runs. */
export interface Placement {
  rank: number;
  node: UniverseNode;
  part: JobPart;
}

/**
 * Places every part's processes, ranks in order of parts: without -np one process per node or CPU
 * the notation names (default C: one per CPU); with -np N, N processes round-robin over them.
 */
export function placeJob(
  parts: readonly JobPart[],
  universe: readonly UniverseNode[],
): Placement[] {
  const out: Placement[] = [];
  for (const part of parts) {
    const items = part.where.length ? part.where : [{ kind: 'all-cpus' as const }];
    const slots = resolveNodeSpec(items, universe);
    if (slots.length === 0) {
      throw new UsageError('no schedulable node or CPU to run on (see lamnodes)', 1);
    }
    const n = part.np ?? slots.length;
    for (let k = 0; k < n; k++)
      out.push({ rank: out.length, node: slots[k % slots.length]!, part });
  }
  return out;
}
