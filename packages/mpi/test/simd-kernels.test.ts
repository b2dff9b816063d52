import { describe, expect, it } from 'vitest';
import { SIMD_MIN_ELEMENTS, simdKernelFor } from '../src/coll/simd-kernels';
import { MAX, MIN, PROD, SUM } from '../src/index';

/**
 * The WebAssembly SIMD kernels behind SUM, PROD, MAX and MIN on long float arrays must give the
 * plain loop's bits: the reference here is the loop itself (a double operation stored into the
 * array's type).
 */
const CASES = [
  { op: SUM, simd: 'add', f: (x: number, y: number) => x + y },
  { op: PROD, simd: 'mul', f: (x: number, y: number) => x * y },
  { op: MAX, simd: 'max', f: Math.max },
  { op: MIN, simd: 'min', f: Math.min },
] as const;
const TYPES = [Float32Array, Float64Array] as const;

/** Values that round differently in single and double precision, signed zeros, NaN, infinity. */
function operand(T: (typeof TYPES)[number], n: number, seed: number) {
  const special = [0, -0, Number.NaN, Number.POSITIVE_INFINITY, -1e-30, 3.4e38, 1 / 3];
  const out = new T(n);
  for (let i = 0; i < n; i++) {
    out[i] =
      i % 97 === 5 ? special[(i + seed) % special.length]! : Math.sin(i * 12.9898 + seed) * 1e4;
  }
  return out;
}

function reference(
  T: (typeof TYPES)[number],
  f: (x: number, y: number) => number,
  a: ArrayLike<number>,
  b: ArrayLike<number>,
) {
  const out = new T(a.length);
  for (let i = 0; i < a.length; i++) out[i] = f(a[i]!, b[i]!);
  return out;
}

/** Equal bit for bit, NaN to NaN and -0 to -0 (toEqual on typed arrays would let -0 pass as 0). */
function expectSameBits(
  got: Float32Array | Float64Array,
  want: Float32Array | Float64Array,
  what: string,
) {
  expect(got.length, what).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    if (!Object.is(got[i], want[i])) {
      throw new Error(`${what}: element ${i} is ${got[i]}, the loop gives ${want[i]}`);
    }
  }
}

describe('SIMD reduction kernels', () => {
  it('exist on this engine for both float types and no other', () => {
    const add = simdKernelFor('add');
    expect(add(new Float32Array(1))).toBeTypeOf('function');
    expect(add(new Float64Array(1))).toBeTypeOf('function');
    expect(add(new Int32Array(1))).toBeNull();
    expect(add(Buffer.alloc(1))).toBeNull();
  });

  for (const { op, simd, f } of CASES) {
    for (const T of TYPES) {
      it(`${op.name} over ${T.name} gives the loop's bits at every length and alignment`, () => {
        const lengths = [SIMD_MIN_ELEMENTS, SIMD_MIN_ELEMENTS + 1, 1027, 4096 + 3, 70_001];
        for (const n of lengths) {
          // Operands that start inside a larger array: no 16-byte alignment to rely on.
          const a = operand(T, n + 3, 1).subarray(1, n + 1);
          const b = operand(T, n + 5, 2).subarray(3, n + 3);
          const want = reference(T, f, a, b);
          const out = new T(n);
          op.apply(a, b, out);
          expectSameBits(out, want, `${op.name} ${T.name} n=${n}`);
          // The kernel itself (not a fallback to the loop) gives the same.
          const direct = new T(n);
          simdKernelFor(simd)(direct)!(a, b, direct);
          expectSameBits(direct, want, `${simd} kernel ${T.name} n=${n}`);
        }
      });

      it(`${op.name} over ${T.name} writes into a or b when out is one of them`, () => {
        const n = 20_000;
        const a = operand(T, n, 3);
        const b = operand(T, n, 4);
        const want = reference(T, f, a, b);
        const intoA = a.slice();
        op.apply(intoA, b, intoA);
        expectSameBits(intoA, want, 'out = a');
        const intoB = b.slice();
        op.apply(a, intoB, intoB);
        expectSameBits(intoB, want, 'out = b');
      });
    }
  }

  it('one kernel after another reuses the shared wasm memory without mixing their data', () => {
    const n = 50_000;
    const a = operand(Float64Array, n, 5);
    const b = operand(Float64Array, n, 6);
    const sum = new Float64Array(n);
    const max = new Float32Array(n);
    SUM.apply(a, b, sum);
    MAX.apply(Float32Array.from(a), Float32Array.from(b), max);
    expectSameBits(
      sum,
      reference(Float64Array, (x, y) => x + y, a, b),
      'SUM after',
    );
    expectSameBits(
      max,
      reference(Float32Array, Math.max, Float32Array.from(a), Float32Array.from(b)),
      'MAX after',
    );
  });
});
