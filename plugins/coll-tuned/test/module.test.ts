/** The module object against its manifest, its parameters, and the checks on their values. */
import { readFileSync } from 'node:fs';
import type { CollComm } from '@ssi/mpi';
import { describe, expect, it } from 'vitest';
import tuned, { ALGORITHM_CHOICES, readDecisions } from '../src/index';
import { contextWith } from './helpers/data';

const defaults = Object.fromEntries(
  Object.entries(tuned.params ?? {}).map(([k, spec]) => [`coll_tuned_${k}`, spec.default]),
) as Record<string, number | string>;

describe('the tuned module', () => {
  it('matches its manifest, takes part in checkpoints, outranks lam_basic by default', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    const entry = pkg.ssi.modules[0];
    expect([entry.type, entry.name, entry.typeApi]).toEqual([
      tuned.type,
      tuned.name,
      tuned.typeApi,
    ]);
    expect(tuned.hasCheckpoint).toBe(true);
    // Above lam_basic (10): measured not slower on any collective it provides, chosen by default.
    expect(defaults.coll_tuned_priority).toBeGreaterThan(10);
  });

  it('every collective has an algorithm parameter listing its choices, auto by default', () => {
    for (const [c, choices] of Object.entries(ALGORITHM_CHOICES)) {
      const spec = tuned.params![`${c}_algorithm`]!;
      expect(spec.default).toBe('auto');
      for (const choice of choices) expect(spec.help).toContain(choice);
    }
    expect(readDecisions(contextWith(defaults).params).algorithm.bcast).toBe('auto');
  });

  it('bad values are errors naming the parameter, the value and what is expected', () => {
    const read = (extra: Record<string, number | string>) => () =>
      readDecisions(contextWith({ ...defaults, ...extra }).params);
    expect(read({ coll_tuned_allreduce_algorithm: 'butterfly' })).toThrow(
      /coll_tuned_allreduce_algorithm is "butterfly"; expected one of auto, recursive_doubling, rabenseifner, ring/,
    );
    expect(read({ coll_tuned_bcast_segment_bytes: 0 })).toThrow(
      /coll_tuned_bcast_segment_bytes is 0; expected a whole number of bytes >= 1/,
    );
    expect(read({ coll_tuned_alltoall_large_bytes: -1 })).toThrow(/alltoall_large_bytes is -1/);
    expect(read({ coll_tuned_scratch_bytes: -1 })).toThrow(
      /coll_tuned_scratch_bytes is -1; expected a whole number of bytes >= 0/,
    );
    expect(read({ coll_tuned_scratch_bytes: 0 })().scratchBytes).toBe(0);
    expect(read({ coll_tuned_alltoall_algorithm: 'pairwise' })().algorithm.alltoall).toBe(
      'pairwise',
    );
  });
});

describe('crowded communicators (coll_tuned_crowded_ranks)', () => {
  /** A communicator of `perNode` ranks on each node, as `init` sees it. */
  const commOn = (perNode: number[]) => {
    const nodes: number[][] = [];
    let next = 0;
    for (const count of perNode) nodes.push(Array.from({ length: count }, () => next++));
    return { name: 'W', size: next, rank: 0, locality: { nodes } } as unknown as CollComm;
  };
  const barrierOn = async (perNode: number[], extra: Record<string, number | string> = {}) => {
    const actions = await tuned.init(commOn(perNode), contextWith({ ...defaults, ...extra }));
    return actions.barrier?.name;
  };

  it('auto takes recursive doubling (power of two) or the tree barrier once a node holds crowded_ranks ranks, counted per node', async () => {
    expect(await barrierOn([8])).toBe('barrierRecursiveDoubling');
    expect(await barrierOn([5])).toBe('barrierTree');
    expect(await barrierOn([4])).toBe('barrierDissemination');
    expect(await barrierOn([4, 4])).toBe('barrierDissemination');
    expect(await barrierOn([1, 6])).toBe('barrierTree');
    expect(await barrierOn([8], { coll_tuned_crowded_ranks: 9 })).toBe('barrierDissemination');
    // A forced algorithm is kept, crowded or not.
    expect(await barrierOn([8], { coll_tuned_barrier_algorithm: 'dissemination' })).toBe(
      'barrierDissemination',
    );
  });
});
