/**
 * reduce-scatter, scan and exscan of the tuned module, every algorithm forced by its parameter
 * value (and `auto` with small thresholds, so it switches inside the test), on 1 to 17 simulated
 * processes (lam_basic's strict fake world, as `algorithms.test.ts`): uneven and empty blocks,
 * in place, SUM, MAXLOC and a non-commutative operator that must come out in rank order.
 */
import type { ReduceOp } from '@ssi/mpi';
import { MAXLOC, SUM } from '@ssi/mpi';
import { type FakeComm, onEveryRank } from '@ssi/mpi/testing';
import { describe, expect, it } from 'vitest';
import { type Algorithms, actionsFor } from '../src/index';
import { AFFINE, affineOf, decisions, foldAll, sumOperand } from './helpers/data';
import { withStatuses } from './helpers/statuses';

const SIZES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17];

type Body = Parameters<typeof onEveryRank>[1];
const on = (size: number, body: Body) =>
  onEveryRank(size, (comm, rank) => body(withStatuses(comm), rank), 10_000);

/** Block sizes in whole (m, c) pairs (AFFINE, MAXLOC), some empty, uneven across ranks. */
const countsFor = (size: number, scale: number) =>
  Array.from({ length: size }, (_, r) => 2 * (((r * 5 + scale) % 4) * scale));

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** (value, index) pairs for MAXLOC whose winners differ by element. */
const locOperand = (length: number) => (r: number) =>
  Float64Array.from({ length }, (_, i) => (i % 2 ? r : (r * 7 + i) % 5));

/** Rank `rank`'s part of the reduction of every rank's `operand`, folded here in rank order. */
function expectedBlock(
  size: number,
  counts: readonly number[],
  rank: number,
  operand: (r: number) => Float64Array,
  op: ReduceOp,
): number[] {
  const whole = foldAll(size, operand, op);
  const at = sum(counts.slice(0, rank));
  return whole.slice(at, at + counts[rank]!);
}

const FORCED: { label: string; forced: Partial<Algorithms> }[] = [
  { label: 'auto', forced: {} },
  { label: 'reduce_scatter recursive_halving', forced: { reduce_scatter: 'recursive_halving' } },
  { label: 'reduce_scatter ring', forced: { reduce_scatter: 'ring' } },
  { label: 'reduce_scatter recursive_doubling', forced: { reduce_scatter: 'recursive_doubling' } },
  { label: 'scan recursive_doubling', forced: { scan: 'recursive_doubling' } },
];

describe.each(FORCED)('$label', ({ forced }) => {
  it.each(SIZES)('reduce-scatter, scan and exscan on %i processes', async (size) => {
    const a = actionsFor(size, decisions(forced));
    for (const scale of [0, 1, 3, 20]) {
      const counts = countsFor(size, scale);
      const total = sum(counts);
      const cases: [string, (r: number) => Float64Array, ReduceOp][] = [
        ['SUM', sumOperand(total), SUM],
        ['MAXLOC', locOperand(total), MAXLOC],
        ['AFFINE (rank order)', (r) => affineOf(r, total / 2), AFFINE],
      ];
      for (const [name, operand, op] of cases) {
        await on(size, async (comm, rank) => {
          const want = expectedBlock(size, counts, rank, operand, op);
          const mine = operand(rank);
          const copy = Float64Array.from(mine);
          const recv = new Float64Array(counts[rank]!);
          await a.reduceScatter!(comm, mine, recv, counts, op);
          expect(Array.from(recv), `${name} reduce-scatter, counts ${counts}`).toEqual(want);
          expect(mine, 'the send buffer is left alone').toEqual(copy);
          const inPlace = operand(rank);
          await a.reduceScatter!(comm, null, inPlace, counts, op);
          expect(Array.from(inPlace.subarray(0, counts[rank]!)), `${name} in place`).toEqual(want);
        });
      }
    }

    // scan and exscan: tuned's only when forced, else left to lam_basic.
    expect(a.scan === undefined, 'scan left out').toBe(forced.scan !== 'recursive_doubling');
    if (!a.scan) return;
    for (const n of [0, 1, 3, 40]) {
      const prefix = (r: number, operand: (r: number) => Float64Array, op: ReduceOp) =>
        foldAll(r + 1, operand, op);
      await on(size, async (comm, rank) => {
        const mine = sumOperand(n)(rank);
        const recv = new Float64Array(n);
        await a.scan!(comm, mine, recv, SUM);
        expect(Array.from(recv), 'scan SUM').toEqual(prefix(rank, sumOperand(n), SUM));
        const affine = (r: number) => affineOf(r, n);
        const inPlace = affine(rank);
        await a.scan!(comm, null, inPlace, AFFINE);
        expect(Array.from(inPlace), 'scan AFFINE in rank order').toEqual(
          prefix(rank, affine, AFFINE),
        );
        // Rank 0's exscan result is untouched (MPI leaves it undefined).
        const ex = new Float64Array(2 * n).fill(-1);
        await a.exscan!(comm, affine(rank), ex, AFFINE);
        const before = rank === 0 ? Array(2 * n).fill(-1) : prefix(rank - 1, affine, AFFINE);
        expect(Array.from(ex), 'exscan AFFINE in rank order').toEqual(before);
        const exInPlace = affine(rank);
        await a.exscan!(comm, null, exInPlace, AFFINE);
        const same = rank === 0 ? Array.from(affine(0)) : before;
        expect(Array.from(exInPlace), 'exscan in place').toEqual(same);
      });
    }
  });
});

/** Messages and bytes each rank sent while `body` ran on every rank. */
async function traffic(size: number, body: Body) {
  const sent = Array.from({ length: size }, () => ({ bytes: 0 }));
  const world: FakeComm[] = await onEveryRank(
    size,
    (comm, rank) => body(withStatuses(comm, sent[rank]), rank),
    10_000,
  );
  return world.map((c, r) => ({ messages: c.self.sends, bytes: sent[r]!.bytes }));
}

describe('the parameter chooses the algorithm (traffic tells them apart)', () => {
  const counts = [8, 8, 8, 8, 8, 8, 8, 8];
  const reduceScatter = async (forced: Partial<Algorithms>, op: ReduceOp = SUM) => {
    const a = actionsFor(8, decisions(forced, { reduceScatterLarge: 1 << 20 }));
    const t = await traffic(8, (c) =>
      a.reduceScatter!(c, new Float64Array(64), new Float64Array(8), counts, op),
    );
    return t[3]!;
  };

  it('reduce-scatter of 8 doubles per rank on 8: halving 3 messages, 224 doubles; ring 7, 56; doubling 3, 192', async () => {
    const halving = { messages: 3, bytes: 8 * (32 + 16 + 8) };
    expect(await reduceScatter({ reduce_scatter: 'recursive_halving' })).toEqual(halving);
    expect(await reduceScatter({})).toEqual(halving);
    expect(await reduceScatter({ reduce_scatter: 'ring' })).toEqual({ messages: 7, bytes: 8 * 56 });
    expect(await reduceScatter({ reduce_scatter: 'recursive_doubling' })).toEqual({
      messages: 3,
      bytes: 8 * 3 * 64,
    });
  });

  it('reduce-scatter with a non-commutative or a user-defined operator runs recursive doubling', async () => {
    const userSum: ReduceOp = { ...SUM, name: 'user sum', commutative: true };
    for (const op of [AFFINE, userSum]) {
      for (const reduce_scatter of ['recursive_halving', 'ring'] as const) {
        expect((await reduceScatter({ reduce_scatter }, op)).bytes).toBe(8 * 3 * 64);
      }
    }
  });

  it('MAXLOC blocks that would cut a (value, index) pair: recursive doubling, and right', async () => {
    const odd = [3, 1, 3, 1, 3, 1, 3, 1];
    const a = actionsFor(8, decisions({ reduce_scatter: 'recursive_halving' }));
    const operand = locOperand(16);
    const t = await traffic(8, async (c, r) => {
      const recv = new Float64Array(odd[r]!);
      await a.reduceScatter!(c, operand(r), recv, odd, MAXLOC);
      expect(Array.from(recv)).toEqual(expectedBlock(8, odd, r, operand, MAXLOC));
    });
    expect(t[3]!.bytes).toBe(8 * 3 * 16);
  });

  it('auto reduce-scatter: ring from reduce_scatter_large_bytes, halving below (6 processes)', async () => {
    const a = actionsFor(6, decisions({}, { reduceScatterLarge: 48 * 8 }));
    const run = (per: number) =>
      traffic(6, (c) =>
        a.reduceScatter!(
          c,
          new Float64Array(6 * per),
          new Float64Array(per),
          Array(6).fill(per),
          SUM,
        ),
      );
    expect((await run(7))[5]!.messages).toBe(2); // 42 doubles: halving on the 4 virtual ranks
    expect((await run(8))[5]!.messages).toBe(5); // 48 doubles: the ring
  });

  it('allgather on 6: bruck 3 messages (also for recursive_doubling), ring 5', async () => {
    const count = async (allgather: Algorithms['allgather']) => {
      const a = actionsFor(6, decisions({ allgather }));
      return (await traffic(6, (c) => a.allgather!(c, new Uint8Array(4), new Uint8Array(24))))[0]!
        .messages;
    };
    expect(await count('bruck')).toBe(3);
    expect(await count('recursive_doubling')).toBe(3);
    expect(await count('ring')).toBe(5);
  });

  it('alltoall on 8: bruck 3 messages of 4 blocks, linear 7; auto takes bruck below alltoall_small_bytes', async () => {
    const run = async (alltoall: Algorithms['alltoall'], block: number) => {
      const a = actionsFor(8, decisions({ alltoall }));
      return (
        await traffic(8, (c) =>
          a.alltoall!(c, new Uint8Array(8 * block), new Uint8Array(8 * block)),
        )
      )[0]!;
    };
    expect(await run('bruck', 2)).toEqual({ messages: 3, bytes: 3 * 4 * 2 });
    expect(await run('linear', 2)).toEqual({ messages: 7, bytes: 7 * 2 });
    expect(await run('auto', 2)).toEqual({ messages: 3, bytes: 24 }); // 2 < 4
    expect((await run('auto', 4)).messages).toBe(7); // 4: linear
  });

  it('scan: recursive doubling sends log2 rounds; auto and linear leave scan and exscan to lam_basic', async () => {
    const a = actionsFor(8, decisions({ scan: 'recursive_doubling' }));
    const t = await traffic(8, (c) => a.scan!(c, new Float64Array(2), new Float64Array(2), SUM));
    expect(t.map((x) => x.messages)).toEqual([3, 3, 3, 3, 2, 2, 1, 0]);
    const linear = actionsFor(8, decisions({ scan: 'linear' }));
    expect([linear.scan, linear.exscan]).toEqual([undefined, undefined]);
    const auto = actionsFor(8, decisions());
    expect([auto.scan, auto.exscan]).toEqual([undefined, undefined]);
  });
});
