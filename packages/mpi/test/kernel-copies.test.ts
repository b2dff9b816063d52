import { describe, expect, it } from 'vitest';
import { kernelPerElementType } from '../src/coll/kernel-copies';
import { SUM } from '../src/index';

/**
 * Reduction kernels run as one compiled copy per element type, so that a loop that has seen many
 * kinds of typed array keeps fast element access for each of them.
 */
describe('kernelPerElementType', () => {
  function add(a: Float64Array, b: Float64Array, out: Float64Array): void {
    for (let i = 0; i < out.length; i++) out[i] = a[i]! + b[i]!;
  }

  it('gives each element type its own copy, and the same copy again for that type', () => {
    const kernelFor = kernelPerElementType<Float64Array>(() => add);
    const f64 = kernelFor(new Float64Array(1));
    const f32 = kernelFor(new Float32Array(1) as unknown as Float64Array);
    expect(f64).not.toBe(add);
    expect(f64).not.toBe(f32);
    expect(kernelFor(new Float64Array(4))).toBe(f64);
    const out = new Float64Array(2);
    f64(Float64Array.of(1, 2), Float64Array.of(10, 20), out);
    expect([...out]).toEqual([11, 22]);
  });

  it('copies whatever `choose` picks for the type', () => {
    const twice = (a: Float64Array, _b: Float64Array, out: Float64Array) => {
      for (let i = 0; i < out.length; i++) out[i] = 2 * a[i]!;
    };
    const kernelFor = kernelPerElementType<Float64Array>((out) =>
      out instanceof Float64Array ? add : twice,
    );
    const out = new Float32Array(1) as unknown as Float64Array;
    kernelFor(out)(Float64Array.of(3), Float64Array.of(4), out);
    expect(out[0]).toBe(6);
  });
});

it('SUM over eleven kinds of typed array, one after another, stays right for each', () => {
  const types = [
    Int8Array,
    Uint8Array,
    Uint8ClampedArray,
    Int16Array,
    Uint16Array,
    Int32Array,
    Uint32Array,
    Float32Array,
    Float64Array,
  ] as const;
  for (let round = 0; round < 3; round++) {
    for (const T of types) {
      const out = new T(3);
      SUM.apply(T.of(1, 2, 3), T.of(4, 5, 6), out);
      expect([...out], T.name).toEqual([5, 7, 9]);
    }
    const big = new BigInt64Array(2);
    SUM.apply(BigInt64Array.of(1n, 2n), BigInt64Array.of(3n, 4n), big);
    expect([...big]).toEqual([4n, 6n]);
    const ubig = new BigUint64Array(1);
    SUM.apply(BigUint64Array.of(5n), BigUint64Array.of(6n), ubig);
    expect([...ubig]).toEqual([11n]);
  }
});
