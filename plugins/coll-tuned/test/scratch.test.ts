/**
 * Scratch kept per communicator between reductions: arrays handed out together never overlap,
 * the memory is reused from call to call (and what the last call left there never leaks into a
 * result), requests above the limit get fresh memory, and each communicator has its own.
 */
import type { CollComm, ReduceOp } from '@ssi/mpi';
import { MAX, SUM } from '@ssi/mpi';
import { onEveryRank } from '@ssi/mpi/testing';
import { describe, expect, it } from 'vitest';
import { type Algorithms, actionsFor } from '../src/index';
import { Scratch, ScratchStore } from '../src/scratch';
import { decisions } from './helpers/data';
import { withStatuses } from './helpers/statuses';

describe('Scratch', () => {
  it('hands out arrays of the operand type that do not overlap', () => {
    const scratch = new Scratch(1 << 16);
    const [a, b, c] = scratch.arrays(new Float32Array(1), 3, 5, 1);
    expect(a).toBeInstanceOf(Float32Array);
    a!.fill(1);
    b!.fill(2);
    c!.fill(3);
    expect([Array.from(a!), Array.from(b!), Array.from(c!)]).toEqual([
      [1, 1, 1],
      [2, 2, 2, 2, 2],
      [3],
    ]);
    // Starts on 8-byte boundaries, so any element type fits.
    const [, d] = scratch.arrays(new Float64Array(1), 1, 2);
    expect(d!.byteOffset % 8).toBe(0);
  });

  it('reuses its memory up to the limit and allocates beyond it', () => {
    const scratch = new Scratch(64);
    const first = scratch.like(new Int32Array(4));
    const again = scratch.like(new Float64Array(2));
    expect(again.buffer).toBe(first.buffer);
    const big = scratch.like(new Float64Array(9)); // 72 bytes > 64
    expect(big.buffer).not.toBe(first.buffer);
    expect(scratch.like(new Float64Array(9)).buffer).not.toBe(big.buffer);
    expect(scratch.like(Buffer.alloc(3))).toBeInstanceOf(Uint8Array);
  });

  it('gives every communicator its own', () => {
    const store = new ScratchStore(1024);
    const one = {} as CollComm;
    const two = {} as CollComm;
    expect(store.of(one)).toBe(store.of(one));
    expect(store.of(one)).not.toBe(store.of(two));
  });
});

/** Rank r's operand of `n` elements for call `k` (k changes every value). */
const operand = (r: number, n: number, k: number) =>
  Float64Array.from({ length: n }, (_, i) => ((r + 1) * (i + 3) * (k + 2)) % 97);

function folded(size: number, n: number, k: number, op: ReduceOp): number[] {
  const acc = operand(0, n, k);
  for (let r = 1; r < size; r++) op.apply(acc, operand(r, n, k), acc);
  return Array.from(acc);
}

const REDUCTIONS: Partial<Algorithms>[] = [
  { allreduce: 'recursive_doubling', reduce: 'binomial', reduce_scatter: 'recursive_halving' },
  { allreduce: 'rabenseifner', reduce: 'ring', reduce_scatter: 'ring' },
  { allreduce: 'ring', reduce_scatter: 'recursive_doubling' },
  { allreduce: 'reduce_bcast' },
];

describe.each(REDUCTIONS)('reductions back to back on one communicator (%o)', (forced) => {
  it.each([2, 3, 4, 5, 8])(
    '%i processes: no result sees what an earlier call left',
    async (size) => {
      // Small enough a limit that the largest vector gets fresh memory and the others reuse it.
      // The ring allreduce in pieces of 5 float64.
      const allreduceSegment = forced.allreduce === 'ring' ? 40 : 0;
      const a = actionsFor(size, decisions(forced, { scratchBytes: 4096, allreduceSegment }));
      await onEveryRank(
        size,
        async (fake, rank) => {
          const comm = withStatuses(fake);
          // Large, small, large again, other sizes: each call finds the last one's data in scratch.
          for (const [k, n, op] of [
            [0, 600, SUM],
            [1, 40, MAX],
            [2, 600, SUM],
            [3, 7 * size, SUM],
            [4, 40, SUM],
          ] as const) {
            const recv = new Float64Array(n);
            await a.allreduce!(comm, operand(rank, n, k), recv, op);
            expect(Array.from(recv), `allreduce ${k}`).toEqual(folded(size, n, k, op));
            const at = k % size;
            const root = rank === at ? new Float64Array(n) : null;
            await a.reduce!(comm, operand(rank, n, k), root, op, at);
            if (root) expect(Array.from(root), `reduce ${k}`).toEqual(folded(size, n, k, op));
            const counts = Array.from(
              { length: size },
              (_, r) => Math.floor(n / size) + (r === 0 ? n % size : 0),
            );
            const start = counts.slice(0, rank).reduce((x, y) => x + y, 0);
            const block = new Float64Array(counts[rank]!);
            await a.reduceScatter!(comm, operand(rank, n, k), block, counts, op);
            expect(Array.from(block), `reduce-scatter ${k}`).toEqual(
              folded(size, n, k, op).slice(start, start + counts[rank]!),
            );
          }
        },
        10_000,
      );
    },
  );
});
