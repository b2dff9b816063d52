/**
 * Every tuned algorithm, forced by its parameter value, on 1 to 17 simulated processes in one
 * test process (lam_basic's strict fake world: synchronous sends, bytes read at matching time,
 * nothing left unmatched): every root, empty to multi-segment buffers, in place, and a
 * non-commutative operator that must come out in rank order.
 */
import type { CollActions } from '@ssi/mpi';
import { MAXLOC, SUM } from '@ssi/mpi';
import { type FakeComm, onEveryRank } from '@ssi/mpi/testing';
import { describe, expect, it } from 'vitest';
import { type Algorithms, actionsFor, type Decisions } from '../src/index';
import { AFFINE, affineOf, bytesOf, decisions, foldAll, sumOperand } from './helpers/data';
import { withStatuses } from './helpers/statuses';

const SIZES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17];
const roots = (size: number) => [...new Set([0, 1 % size, Math.floor(size / 2), size - 1])];
const concat = (parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => Array.from(p)));

/** Each configuration: one algorithm forced for its collective. */
const FORCED: {
  label: string;
  forced: Partial<Algorithms>;
  crowded?: boolean;
  sizes?: Partial<Decisions>;
}[] = [
  { label: 'auto', forced: {} },
  { label: 'auto, crowded', forced: {}, crowded: true },
  { label: 'barrier dissemination', forced: { barrier: 'dissemination' } },
  { label: 'barrier recursive_doubling', forced: { barrier: 'recursive_doubling' } },
  { label: 'barrier tree', forced: { barrier: 'tree' } },
  { label: 'bcast binomial', forced: { bcast: 'binomial' } },
  { label: 'bcast scatter_allgather', forced: { bcast: 'scatter_allgather' } },
  { label: 'bcast chain', forced: { bcast: 'chain' } },
  { label: 'allreduce recursive_doubling', forced: { allreduce: 'recursive_doubling' } },
  { label: 'allreduce rabenseifner', forced: { allreduce: 'rabenseifner' } },
  { label: 'allreduce ring', forced: { allreduce: 'ring' } },
  // Pieces of 16 bytes: 2 float64 (a MAXLOC pair), so blocks of 40 elements travel in many.
  {
    label: 'allreduce ring in pieces',
    forced: { allreduce: 'ring' },
    sizes: { allreduceSegment: 16 },
  },
  {
    label: 'allreduce ring, odd pieces',
    forced: { allreduce: 'ring' },
    sizes: { allreduceSegment: 24 },
  },
  { label: 'allreduce reduce_bcast', forced: { allreduce: 'reduce_bcast' } },
  { label: 'reduce ring', forced: { reduce: 'ring' } },
  { label: 'reduce ring, allreduce ring', forced: { reduce: 'ring', allreduce: 'ring' } },
  { label: 'allgather recursive_doubling', forced: { allgather: 'recursive_doubling' } },
  { label: 'allgather bruck', forced: { allgather: 'bruck' } },
  { label: 'allgather ring', forced: { allgather: 'ring' } },
  { label: 'allgather gather_bcast', forced: { allgather: 'gather_bcast' } },
  { label: 'alltoall linear', forced: { alltoall: 'linear' } },
  { label: 'alltoall pairwise', forced: { alltoall: 'pairwise' } },
  { label: 'alltoall bruck', forced: { alltoall: 'bruck' } },
];

type Body = Parameters<typeof onEveryRank>[1];
const on = (size: number, _actions: CollActions, body: Body) =>
  onEveryRank(size, (comm, rank) => body(withStatuses(comm), rank), 10_000);

describe.each(FORCED)('$label', ({ forced, crowded, sizes }) => {
  it.each(SIZES)('every collective on %i processes', async (size) => {
    const a = actionsFor(size, decisions(forced, sizes), crowded);
    await on(size, a, async (comm) => {
      for (let i = 0; i < 3; i++) await a.barrier!(comm);
    });

    for (const length of [0, 1, 7, 100, 1000]) {
      for (const root of roots(size)) {
        await on(size, a, async (comm, rank) => {
          const buf = rank === root ? bytesOf(root, length) : new Uint8Array(length);
          await a.bcast!(comm, buf, root);
          expect(buf).toEqual(bytesOf(root, length));
        });
      }
    }

    for (const n of [0, 1, 3, 40]) {
      const expected = foldAll(size, sumOperand(n), SUM);
      const expectedAffine = foldAll(size, (r) => affineOf(r, n), AFFINE);
      for (const root of roots(size)) {
        await on(size, a, async (comm, rank) => {
          const recv = rank === root ? new Float64Array(n) : null;
          await a.reduce!(comm, sumOperand(n)(rank), recv, SUM, root);
          if (rank === root) expect(Array.from(recv!)).toEqual(expected);
          // In place at the root, non-commutative.
          const inout = rank === root ? affineOf(rank, n) : null;
          await a.reduce!(comm, rank === root ? null : affineOf(rank, n), inout, AFFINE, root);
          if (rank === root)
            expect(Array.from(inout!), `affine reduce to ${root}`).toEqual(expectedAffine);
        });
      }
      await on(size, a, async (comm, rank) => {
        const mine = sumOperand(n)(rank);
        const copy = Float64Array.from(mine);
        const recv = new Float64Array(n);
        await a.allreduce!(comm, mine, recv, SUM);
        expect(Array.from(recv)).toEqual(expected);
        expect(mine, 'the send buffer is left alone').toEqual(copy);
        const inout = affineOf(rank, n);
        await a.allreduce!(comm, null, inout, AFFINE);
        expect(Array.from(inout), 'non-commutative allreduce in rank order').toEqual(
          expectedAffine,
        );
        // MAXLOC on (value, index) pairs: the vector is cut between pairs; ties take the lower index.
        const pairs = Float64Array.from({ length: 2 * n }, (_, i) =>
          i % 2 ? rank : (rank * 7 + i) % 5,
        );
        const best = Array.from({ length: 2 * n }, (_, i) => {
          if (i % 2) return Number.NaN;
          let v = -1;
          let at = -1;
          for (let r = 0; r < size; r++) {
            const x = (r * 7 + i) % 5;
            if (x > v) [v, at] = [x, r];
          }
          return [v, at];
        });
        const loc = new Float64Array(2 * n);
        await a.allreduce!(comm, pairs, loc, MAXLOC);
        const want = best.flatMap((x) => (Array.isArray(x) ? x : []));
        expect(Array.from(loc), 'MAXLOC').toEqual(want);
      });
    }

    // Sums whose value depends on the association: reduce (every root) and the allreduce of the
    // same association agree bit for bit (the binomial tree: recursive doubling's; the ring
    // reduce: the ring allreduce's).
    const sameBits = actionsFor(
      size,
      decisions({ allreduce: forced.reduce === 'ring' ? 'ring' : 'recursive_doubling' }),
    );
    const rabenseifner = actionsFor(size, decisions({ allreduce: 'rabenseifner' }));
    for (const n of [3, 60]) {
      const fp = (r: number) =>
        Float64Array.from(
          { length: n },
          (_, i) => [0.1 * (r + 1), 1e16 / (r + 1), -1e-8 * r][i % 3]! * (i + 1),
        );
      for (const root of roots(size)) {
        await on(size, a, async (comm, rank) => {
          const all = new Float64Array(n);
          await sameBits.allreduce!(comm, fp(rank), all, SUM);
          const one = rank === root ? new Float64Array(n) : null;
          await a.reduce!(comm, fp(rank), one, SUM, root);
          if (rank === root)
            expect(Array.from(one!), 'reduce and allreduce agree').toEqual(Array.from(all));
          // Rabenseifner has recursive doubling's association too on a power of two.
          if (forced.reduce !== 'ring' && (size & (size - 1)) === 0) {
            const halved = new Float64Array(n);
            await rabenseifner.allreduce!(comm, fp(rank), halved, SUM);
            expect(Array.from(halved), 'Rabenseifner and recursive doubling agree').toEqual(
              Array.from(all),
            );
          }
        });
      }
    }

    for (const block of [0, 1, 5, 100]) {
      const all = concat(Array.from({ length: size }, (_, r) => bytesOf(r, block, 1)));
      await on(size, a, async (comm, rank) => {
        const recv = new Uint8Array(block * size);
        await a.allgather!(comm, bytesOf(rank, block, 1), recv);
        expect(recv).toEqual(all);
        const inPlace = new Uint8Array(block * size);
        inPlace.set(bytesOf(rank, block, 1), rank * block);
        await a.allgather!(comm, null, inPlace);
        expect(inPlace).toEqual(all);
      });
      // Rank i's block for j carries salt j; j expects from i bytesOf(i, block, j).
      await on(size, a, async (comm, rank) => {
        const send = concat(Array.from({ length: size }, (_, j) => bytesOf(rank, block, j)));
        const want = concat(Array.from({ length: size }, (_, i) => bytesOf(i, block, rank)));
        const recv = new Uint8Array(block * size);
        await a.alltoall!(comm, send, recv);
        expect(recv).toEqual(want);
        const inPlace = Uint8Array.from(send);
        await a.alltoall!(comm, null, inPlace);
        expect(inPlace).toEqual(want);
      });
    }
  });
});

/** Messages each rank sent while `body` ran on every rank. */
async function sendsOf(size: number, body: Parameters<typeof onEveryRank>[1]): Promise<number[]> {
  const world: FakeComm[] = await onEveryRank(
    size,
    (comm, rank) => body(withStatuses(comm), rank),
    10_000,
  );
  return world.map((c) => c.self.sends);
}

describe('the parameter chooses the algorithm (message counts tell them apart)', () => {
  it('barrier: dissemination sends log2 rounds everywhere; recursive doubling folds rank 1 in', async () => {
    const dis = actionsFor(5, decisions({ barrier: 'dissemination' }));
    const rd = actionsFor(5, decisions({ barrier: 'recursive_doubling' }));
    expect(await sendsOf(5, (c) => dis.barrier!(c))).toEqual([3, 3, 3, 3, 3]);
    expect(await sendsOf(5, (c) => rd.barrier!(c))).toEqual([3, 1, 2, 2, 2]);
    const tree = actionsFor(5, decisions({ barrier: 'tree' }));
    expect(await sendsOf(5, (c) => tree.barrier!(c))).toEqual([3, 1, 2, 1, 1]);
  });

  it('bcast of 64 bytes on 8: binomial, scatter-allgather, chain of 16-byte segments', async () => {
    const count = (bcast: Algorithms['bcast']) => {
      const a = actionsFor(8, decisions({ bcast }));
      return sendsOf(8, (c) => a.bcast!(c, new Uint8Array(64), 0));
    };
    expect((await count('binomial'))[0]).toBe(3);
    expect((await count('scatter_allgather'))[0]).toBe(3 + 7);
    expect((await count('chain'))[0]).toBe(4);
    expect((await count('chain'))[7]).toBe(0);
  });

  it('allreduce on 8: recursive doubling 3, Rabenseifner 6, ring 14 messages per rank', async () => {
    const count = async (allreduce: Algorithms['allreduce']) => {
      const a = actionsFor(8, decisions({ allreduce }));
      return (
        await sendsOf(8, (c) => a.allreduce!(c, new Float64Array(16), new Float64Array(16), SUM))
      )[3];
    };
    expect(await count('recursive_doubling')).toBe(3);
    expect(await count('rabenseifner')).toBe(6);
    expect(await count('ring')).toBe(14);
    expect(await count('reduce_bcast')).toBe(1);
  });

  it('ring and Rabenseifner with a user-defined operator run recursive doubling (vectors whole)', async () => {
    for (const allreduce of ['ring', 'rabenseifner'] as const) {
      const a = actionsFor(8, decisions({ allreduce }));
      const sends = await sendsOf(8, (c, r) => a.allreduce!(c, null, affineOf(r, 4), AFFINE));
      expect(sends[3]).toBe(3);
    }
  });

  it('allgather on 8: recursive doubling 3, ring 7; auto switches at allgather_large_bytes', async () => {
    const count = async (allgather: Algorithms['allgather'], block: number) => {
      const a = actionsFor(8, decisions({ allgather }));
      return (
        await sendsOf(8, (c) => a.allgather!(c, new Uint8Array(block), new Uint8Array(8 * block)))
      )[0];
    };
    expect(await count('recursive_doubling', 4)).toBe(3);
    expect(await count('ring', 4)).toBe(7);
    expect(await count('auto', 4)).toBe(3); // 32 bytes < 64
    expect(await count('auto', 8)).toBe(7); // 64 bytes
  });

  it('allgather gather_bcast on 8: 2 (n - 1) messages, rank 0 only bcasts; auto when crowded', async () => {
    const sends = (a: ReturnType<typeof actionsFor>) =>
      sendsOf(8, (c) => a.allgather!(c, new Uint8Array(4), new Uint8Array(32)));
    const forced = await sends(actionsFor(8, decisions({ allgather: 'gather_bcast' })));
    expect(forced.reduce((x, y) => x + y, 0)).toBe(14);
    expect(forced[0]).toBe(3);
    expect(await sends(actionsFor(8, decisions(), true))).toEqual(forced);
  });

  it('auto allreduce: recursive doubling below allreduce_large_bytes; at it Rabenseifner on a power of two, the ring on other sizes', async () => {
    const a = actionsFor(8, decisions());
    const small = await sendsOf(8, (c) =>
      a.allreduce!(c, new Float64Array(7), new Float64Array(7), SUM),
    );
    const large = await sendsOf(8, (c) =>
      a.allreduce!(c, new Float64Array(8), new Float64Array(8), SUM),
    );
    expect([small[0], large[0]]).toEqual([3, 6]);
    const b = actionsFor(6, decisions());
    const ring = await sendsOf(6, (c) =>
      b.allreduce!(c, new Float64Array(8), new Float64Array(8), SUM),
    );
    expect(ring).toEqual([10, 10, 10, 10, 10, 10]);
  });

  it('crowded (crowded_ranks on a node): on a power of two auto takes recursive doubling, elsewhere the tree barrier and reduce_bcast below allreduce_large_bytes', async () => {
    // 8 ranks: recursive doubling (log2 8 = 3 swaps each), whose first rounds stay within the
    // blocks of neighbouring ranks mpirun binds an oversubscribed node's ranks in.
    const p = actionsFor(8, decisions(), true);
    expect(await sendsOf(8, (c) => p.barrier!(c))).toEqual([3, 3, 3, 3, 3, 3, 3, 3]);
    const doubling = await sendsOf(8, (c) =>
      p.allreduce!(c, new Float64Array(7), new Float64Array(7), SUM),
    );
    expect(doubling).toEqual([3, 3, 3, 3, 3, 3, 3, 3]);
    // 6 ranks: the tree barrier (rank 3 tells its parent, nothing else) and reduce_bcast.
    const a = actionsFor(6, decisions(), true);
    expect((await sendsOf(6, (c) => a.barrier!(c)))[3]).toBe(1);
    const small = await sendsOf(6, (c) =>
      a.allreduce!(c, new Float64Array(7), new Float64Array(7), SUM),
    );
    expect([small[0], small[3]]).toEqual([3, 1]);
    const large = await sendsOf(6, (c) =>
      a.allreduce!(c, new Float64Array(8), new Float64Array(8), SUM),
    );
    expect(large[3]).toBe(10);
    // A user-defined operator above the threshold: still reduce_bcast (vectors whole).
    const user = await sendsOf(6, (c, r) => a.allreduce!(c, null, affineOf(r, 4), AFFINE));
    expect(user[3]).toBe(1);
    // Not crowded: dissemination, recursive doubling.
    const b = actionsFor(8, decisions(), false);
    expect((await sendsOf(8, (c) => b.barrier!(c)))[3]).toBe(3);
  });
});
