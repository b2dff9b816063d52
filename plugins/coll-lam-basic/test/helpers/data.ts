/** Test data computed independently of the code under test. */
import type { CollActions, CollContext, NumericArray, ReduceOp } from '@ssi/mpi';
import { actionsFor } from '../../src/module';

/** A byte that depends on who made it and where it sits. */
export function byteOf(rank: number, i: number, salt = 0): number {
  return (rank * 37 + i * 11 + salt * 101 + 5) & 255;
}

/** `length` bytes of rank's data. */
export function blockOf(rank: number, length: number, salt = 0): Uint8Array {
  return Uint8Array.from({ length }, (_, i) => byteOf(rank, i, salt));
}

/** Concatenation of byte arrays. */
export function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Integer 2x2 matrices generating a non-commutative group; products stay exact in doubles. */
const GENERATORS = [
  [1, 1, 0, 1],
  [1, 0, 1, 1],
  [2, 1, 1, 1],
];

/** Rank's operand: `matrices` 2x2 matrices, four elements each. */
export function matricesOf(rank: number, matrices: number): Float64Array {
  const out = new Float64Array(matrices * 4);
  for (let m = 0; m < matrices; m++) out.set(GENERATORS[(rank + 2 * m) % 3]!, m * 4);
  return out;
}

function multiply(a: ArrayLike<number>, b: ArrayLike<number>, at: number, out: number[]): void {
  const [p, q, r, s] = [a[at]!, a[at + 1]!, a[at + 2]!, a[at + 3]!];
  const [w, x, y, z] = [b[at]!, b[at + 1]!, b[at + 2]!, b[at + 3]!];
  out.push(p * w + q * y, p * x + q * z, r * w + s * y, r * x + s * z);
}

/** Matrix product, element block by block: associative, not commutative. */
export const MATMUL: ReduceOp = {
  name: 'matmul',
  commutative: false,
  check: (array) => (array.length % 4 === 0 ? null : 'matmul needs blocks of four'),
  apply(a: NumericArray, b: NumericArray, out: NumericArray): void {
    const result: number[] = [];
    for (let i = 0; i < out.length; i += 4) {
      multiply(a as Float64Array, b as Float64Array, i, result);
    }
    (out as Float64Array).set(result);
  },
};

/** x(from) * x(from+1) * ... * x(to-1), multiplied left to right. */
export function productOfRanks(from: number, to: number, matrices: number): number[] {
  let acc = Array.from(matricesOf(from, matrices));
  for (let r = from + 1; r < to; r++) {
    const next: number[] = [];
    const x = matricesOf(r, matrices);
    for (let i = 0; i < acc.length; i += 4) multiply(acc, x, i, next);
    acc = next;
  }
  return acc;
}

/** A coll context whose parameter registry knows exactly `values`. */
export function contextWith(values: Record<string, number>): CollContext {
  const params = {
    isRegistered: (name: string) => name in values,
    get: (name: string) => {
      if (!(name in values)) throw new Error(`parameter ${name} is not registered`);
      return values[name];
    },
  };
  return { params: params as unknown as CollContext['params'], verbose: () => {} };
}

/** The two algorithm families, forced by the crossovers. */
export const ALGORITHMS: { label: string; actions: (size: number) => CollActions }[] = [
  {
    label: 'linear',
    actions: (size) => actionsFor(size, { crossover: 1_000, reduceCrossover: 1_000 }),
  },
  { label: 'binomial', actions: (size) => actionsFor(size, { crossover: 1, reduceCrossover: 1 }) },
];
