/** Test data computed independently of the code under test. */
import type { CollContext, NumericArray, ReduceOp } from '@ssi/mpi';
import type { Algorithms, Decisions } from '../../src/index';

/** A byte that depends on who made it and where it sits. */
export const byteOf = (rank: number, i: number, salt = 0) =>
  (rank * 37 + i * 11 + salt * 101 + 5) & 255;

export const bytesOf = (rank: number, length: number, salt = 0) =>
  Uint8Array.from({ length }, (_, i) => byteOf(rank, i, salt));

const P = 10_007;

/**
 * Composition of affine maps x -> m x + c modulo a prime, as (m, c) pairs: associative, not
 * commutative, exact in doubles. The result shows the order operands were combined in.
 */
export const AFFINE: ReduceOp = {
  name: 'affine',
  commutative: false,
  check: (a) => (a.length % 2 === 0 ? null : 'affine needs (m, c) pairs'),
  apply(a: NumericArray, b: NumericArray, out: NumericArray): void {
    const x = a as Float64Array;
    const y = b as Float64Array;
    const o = out as Float64Array;
    for (let i = 0; i < o.length; i += 2) {
      const [m1, c1, m2, c2] = [x[i]!, x[i + 1]!, y[i]!, y[i + 1]!];
      o[i] = (m1 * m2) % P;
      o[i + 1] = (m2 * c1 + c2) % P;
    }
  },
};

/** Rank r's operand of `pairs` affine maps. */
export const affineOf = (r: number, pairs: number) =>
  Float64Array.from({ length: 2 * pairs }, (_, i) =>
    i % 2 === 0 ? (r + i + 2) % P : (3 * r + i + 1) % P,
  );

/** x0 op x1 op ... op x(size-1), folded here left to right. */
export function foldAll(
  size: number,
  operand: (r: number) => Float64Array,
  op: ReduceOp,
): number[] {
  const acc = Float64Array.from(operand(0));
  for (let r = 1; r < size; r++) op.apply(acc, operand(r), acc);
  return Array.from(acc);
}

export const sumOperand = (n: number) => (r: number) =>
  Float64Array.from({ length: n }, (_, i) => r * 1000 + i);

const AUTO: Algorithms = {
  barrier: 'auto',
  bcast: 'auto',
  allreduce: 'auto',
  reduce: 'auto',
  allgather: 'auto',
  alltoall: 'auto',
  reduce_scatter: 'auto',
  scan: 'auto',
};

/** Decisions with the given algorithms forced and small thresholds (so auto switches too). */
export function decisions(
  forced: Partial<Algorithms> = {},
  sizes: Partial<Decisions> = {},
): Decisions {
  return {
    algorithm: { ...AUTO, ...forced },
    bcastLarge: 64,
    bcastSegment: 16,
    allreduceLarge: 64,
    allreduceSegment: 0,
    allgatherLarge: 64,
    alltoallLarge: 8,
    alltoallSmall: 4,
    reduceScatterLarge: 64,
    crowdedRanks: 5,
    // Kept between calls: every test's reductions after the first reuse a communicator's scratch.
    scratchBytes: 1 << 20,
    ...sizes,
  };
}

/** A coll context whose parameter registry knows exactly `values`. */
export function contextWith(values: Record<string, number | string>): CollContext {
  const params = {
    isRegistered: (name: string) => name in values,
    get: (name: string) => {
      if (!(name in values)) throw new Error(`parameter ${name} is not registered`);
      return values[name];
    },
  };
  return { params: params as unknown as CollContext['params'], verbose: () => {} };
}
