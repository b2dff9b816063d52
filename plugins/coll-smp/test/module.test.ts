/**
 * The module object against its manifest, the query's decisions (from node locality) and the
 * checks on parameter values; in-process, on stand-in communicators. The algorithms themselves
 * are tested in real processes (matrix.test.ts).
 */
import { readFileSync } from 'node:fs';
import { allowedCpus, parseCpuList } from '@ssi/lam';
import type { CollComm, CollContext, CollLocality } from '@ssi/mpi';
import { describe, expect, it } from 'vitest';
import { cpuCount, cpuSet } from '../src/crowding';
import type { Hierarchy } from '../src/hierarchy';
import smp, { readSmpSettings, SMP_PARAMS } from '../src/index';
import { doublingIsShorter, takesDoubling } from '../src/reduction-exchange';

const defaults = Object.fromEntries(
  Object.entries(smp.params ?? {}).map(([k, spec]) => [`coll_smp_${k}`, spec.default]),
) as Record<string, number | string>;

function contextWith(values: Record<string, number | string>): CollContext {
  const params = {
    isRegistered: (name: string) => name in values,
    get: (name: string) => {
      if (!(name in values)) throw new Error(`parameter ${name} is not registered`);
      return values[name];
    },
  };
  return { params: params as unknown as CollContext['params'], verbose: () => {} };
}

/** A communicator as `query` sees it: `perNode` ranks on each node, in blocks. */
function commOn(perNode: number[], extra: Partial<CollComm> = {}): CollComm {
  let next = 0;
  const nodes = perNode.map((n) => Array.from({ length: n }, () => next++));
  const locality = { nodes, singleNode: nodes.length <= 1 } as unknown as CollLocality;
  return { name: 'COMM_TEST', size: next, isInter: false, locality, ...extra } as CollComm;
}

const ctx = contextWith(defaults);

describe('the smp module', () => {
  it('matches its manifest (coll API 1.2: locality) and takes part in checkpoints', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    const entry = pkg.ssi.modules[0];
    expect([entry.type, entry.name, entry.typeApi]).toEqual([smp.type, smp.name, smp.typeApi]);
    expect(smp.typeApi).toBe('1.2.0');
    expect(smp.hasCheckpoint).toBe(true);
    expect(typeof smp.finalize).toBe('function');
    // Above lam_basic (measured faster: the README's measurements), below tuned (see README).
    expect(defaults.coll_smp_priority).toBeGreaterThan(10);
    expect(defaults.coll_smp_priority).toBeLessThan(30);
  });

  it('offers itself on communicators that span nodes with a shared node', async () => {
    for (const layout of [
      [2, 1],
      [1, 2],
      [2, 2],
      [4, 1],
      [1, 1, 3],
      [3, 3, 2],
    ]) {
      expect(await smp.query(commOn(layout), ctx), JSON.stringify(layout)).toEqual({
        priority: 20,
      });
    }
  });

  it('declines with the reason otherwise', async () => {
    expect(await smp.query(commOn([1]), ctx)).toBe(
      'all 1 ranks are on one node: no off-node traffic to save',
    );
    expect(await smp.query(commOn([4]), ctx)).toMatch(/all 4 ranks are on one node/);
    expect(await smp.query(commOn([1, 1, 1]), ctx)).toBe(
      'one rank per node (3 nodes): no on-node level to use',
    );
    expect(await smp.query(commOn([2, 2], { isInter: true }), ctx)).toMatch(
      /intercommunicators are not served/,
    );
    // its own flat duplicate must go to lam_basic
    expect(await smp.query(commOn([2, 2], { name: 'COMM_WORLD [smp flat]' }), ctx)).toMatch(
      /the flat duplicate/,
    );
  });

  it('takes recursive doubling for small allreduce only where it is fewer hops', () => {
    expect(doublingIsShorter(4, 2)).toBe(true); // 2 hops against 3
    expect(doublingIsShorter(8, 2)).toBe(false); // 3 against 3: the levels
    expect(doublingIsShorter(8, 4)).toBe(true); // 3 against 4
    expect(doublingIsShorter(6, 2)).toBe(false); // not a power of two
  });

  it('takes recursive doubling only where no node has fewer CPUs than ranks', () => {
    const on = (nodes: number, crowded: boolean) =>
      ({ loc: { nodes: new Array(nodes).fill([]) }, crowded }) as unknown as Hierarchy;
    expect(takesDoubling(on(2, false), 4)).toBe(true);
    expect(takesDoubling(on(2, true), 4)).toBe(false); // ranks take turns: fewer messages
    expect(takesDoubling(on(2, false), 8)).toBe(false); // not shorter
  });

  it('counts the CPUs a rank may run on (@ssi/lam reads them) as a bit set', () => {
    const set = cpuSet(parseCpuList('0-1,4,6-7'))!;
    expect(set[0]).toBe(0b11010011);
    expect(cpuCount(set)).toBe(5);
    expect(cpuCount(cpuSet([3])!)).toBe(1);
    expect(cpuCount(cpuSet(parseCpuList('0-1023'))!)).toBe(1024); // every bit, the sign bits too
    expect(cpuCount(cpuSet([1023, 1024, 4096])!)).toBe(1); // past 1023: not counted
    expect(cpuSet(null)).toBeNull();
    expect(cpuSet(allowedCpus('self'))).not.toBeNull(); // this process (Linux)
  });

  it('reads its parameters; bad values are errors naming the parameter and what is expected', () => {
    expect(readSmpSettings(ctx.params)).toEqual({
      associative: true,
      bcastMinBytes: 0,
      bcastSegmentBytes: 0,
      bcastStripeMinBytes: 0,
      reduceMinBytes: 0,
      allreduceMinBytes: 0,
      shm: true,
      shmChunkBytes: SMP_PARAMS.shm_chunk_bytes.default,
      shmMinBytes: SMP_PARAMS.shm_min_bytes.default,
      shmSingleCopy: true,
    });
    const read = (extra: Record<string, number | string>) => () =>
      readSmpSettings(contextWith({ ...defaults, ...extra }).params);
    expect(read({ coll_smp_associative: 2 })).toThrow('coll_smp_associative is 2; expected 0 or 1');
    expect(read({ coll_smp_bcast_min_bytes: -1 })).toThrow(
      'coll_smp_bcast_min_bytes is -1; expected a whole number of bytes >= 0',
    );
    expect(read({ coll_smp_bcast_stripe_min_bytes: 1.5 })).toThrow(
      'coll_smp_bcast_stripe_min_bytes is 1.5; expected a whole number of bytes >= 0',
    );
    expect(read({ coll_smp_allreduce_min_bytes: 'big' })).toThrow(/allreduce_min_bytes is "big"/);
    expect(read({ coll_smp_shm: 3 })).toThrow('coll_smp_shm is 3; expected 0 or 1');
    expect(read({ coll_smp_shm_chunk_bytes: 4100 })).toThrow(
      'coll_smp_shm_chunk_bytes is 4100; expected a multiple of 8 bytes, at least 4096',
    );
    expect(read({ coll_smp_shm_chunk_bytes: 1024 })).toThrow(/at least 4096/);
    expect(read({ coll_smp_shm_single_copy: 2 })).toThrow(
      'coll_smp_shm_single_copy is 2; expected 0 or 1',
    );
    expect(read({ coll_smp_shm: 0, coll_smp_shm_min_bytes: 1 })()).toMatchObject({
      shm: false,
      shmMinBytes: 1,
    });
    expect(read({ coll_smp_associative: 0, coll_smp_reduce_min_bytes: 4096 })()).toMatchObject({
      associative: false,
      reduceMinBytes: 4096,
    });
  });
});
