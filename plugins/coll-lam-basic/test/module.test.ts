/** The module object, its manifest, and the crossover that picks linear or binomial algorithms. */
import { readFileSync } from 'node:fs';
import type { CollActions, CollComm } from '@ssi/mpi';
import { intraWorld, onEveryRank } from '@ssi/mpi/testing';
import { describe, expect, it } from 'vitest';
import lamBasic from '../src/index';
import { contextWith } from './helpers/data';

const INTRA = [
  'barrier',
  'bcast',
  'gather',
  'gatherv',
  'scatter',
  'scatterv',
  'allgather',
  'allgatherv',
  'alltoall',
  'alltoallv',
  'alltoallw',
  'reduce',
  'allreduce',
  'reduceScatter',
  'scan',
  'exscan',
] as const;
const INTER = ['barrierInter', 'bcastInter', 'allreduceInter', 'allgatherInter'] as const;

async function actionsOn(size: number, params: Record<string, number>): Promise<CollActions> {
  const comm = intraWorld(size)[0]!.asCollComm;
  return lamBasic.init(comm, contextWith(params));
}

/** How many messages the root of a broadcast sends, on `size` processes. */
async function bcastRootSends(size: number, params: Record<string, number>): Promise<number> {
  const actions = await actionsOn(size, params);
  const world = await onEveryRank(size, (comm: CollComm) =>
    actions.bcast!(comm, new Uint8Array(8), 0),
  );
  return world[0]!.self.sends;
}

/** How many messages the root of a reduction receives, on `size` processes. */
async function reduceRootReceives(size: number, params: Record<string, number>): Promise<number> {
  const actions = await actionsOn(size, params);
  const op = {
    name: 'sum',
    commutative: true,
    check: () => null,
    apply: (a: Float64Array, b: Float64Array, out: Float64Array) => {
      for (let i = 0; i < out.length; i++) out[i] = a[i]! + b[i]!;
    },
  };
  const world = await onEveryRank(size, (comm: CollComm, rank: number) =>
    actions.reduce!(
      comm,
      new Float64Array(2),
      rank === 0 ? new Float64Array(2) : null,
      op as never,
      0,
    ),
  );
  return world[0]!.self.receives;
}

describe('the lam_basic module', () => {
  it('carries the meta data its manifest declares', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(pkg.ssi.modules).toEqual([
      { type: 'coll', name: 'lam_basic', typeApi: '1.1.0', entry: './dist/index.js' },
    ]);
    expect(lamBasic).toMatchObject({
      ssiApi: '1.0.0',
      type: 'coll',
      typeApi: '1.1.0',
      name: 'lam_basic',
      version: '1.0.0',
      hasCheckpoint: true,
    });
  });

  it('answers on every communicator with coll_lam_basic_priority (registered with default 10)', async () => {
    expect(lamBasic.params?.priority).toMatchObject({ type: 'int', default: 10 });
    for (const size of [1, 2, 7]) {
      const comm = intraWorld(size)[0]!.asCollComm;
      for (const priority of [10, 33]) {
        const ctx = contextWith({ coll_lam_basic_priority: priority });
        expect(await lamBasic.query(comm, ctx)).toEqual({ priority });
      }
    }
  });

  it('gives every intra- and intercommunicator collective and the checkpoint phases', async () => {
    const actions = await actionsOn(3, {});
    for (const name of [...INTRA, ...INTER]) expect(typeof actions[name]).toBe('function');
    for (const phase of ['interrupt', 'checkpoint', 'continue', 'restart'] as const) {
      expect(typeof actions[phase]).toBe('function');
    }
  });

  it('uses linear algorithms below the default crossover of 4 and trees from 4 on', async () => {
    // Root of a linear bcast sends size - 1 messages; of a binomial one ceil(log2 size).
    expect(await bcastRootSends(3, {})).toBe(2);
    expect(await bcastRootSends(5, {})).toBe(3);
    expect(await bcastRootSends(8, {})).toBe(3);
    expect(await reduceRootReceives(8, {})).toBe(3);
  });

  it('reads coll_crossover and coll_reduce_crossover separately', async () => {
    const params = { coll_crossover: 9, coll_reduce_crossover: 2 };
    expect(await bcastRootSends(8, params)).toBe(7);
    expect(await bcastRootSends(9, params)).toBe(4);
    expect(await reduceRootReceives(5, params)).toBe(3);
    expect(await reduceRootReceives(5, { coll_crossover: 2, coll_reduce_crossover: 6 })).toBe(4);
  });
});
