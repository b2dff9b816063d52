import { describe, expect, it } from 'vitest';
import type { ReduceOp } from '../src/coll/ops';
import {
  BAND,
  BOR,
  BUILTIN_OPS,
  BXOR,
  createOp,
  LAND,
  LOR,
  LXOR,
  MAX,
  MAXLOC,
  MIN,
  MINLOC,
  PROD,
  SUM,
} from '../src/coll/ops';
import type { NumericArray } from '../src/coll/types';
import { ErrorClass, MpiError } from '../src/errors';

/** Deterministic pseudo-random integers (mulberry32), so failures reproduce. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface IntType {
  ctor: new (length: number) => NumericArray;
  bits: number;
  signed: boolean;
  clamped?: boolean;
}

const INT_TYPES: IntType[] = [
  { ctor: Int8Array, bits: 8, signed: true },
  { ctor: Uint8Array, bits: 8, signed: false },
  { ctor: Uint8ClampedArray, bits: 8, signed: false, clamped: true },
  { ctor: Int16Array, bits: 16, signed: true },
  { ctor: Uint16Array, bits: 16, signed: false },
  { ctor: Int32Array, bits: 32, signed: true },
  { ctor: Uint32Array, bits: 32, signed: false },
  { ctor: BigInt64Array, bits: 64, signed: true },
  { ctor: BigUint64Array, bits: 64, signed: false },
];

/** Mathematical result brought into the element type, computed with BigInt (not the op's code). */
function wrap(t: IntType, v: bigint): bigint {
  if (t.clamped) return v < 0n ? 0n : v > 255n ? 255n : v;
  return t.signed ? BigInt.asIntN(t.bits, v) : BigInt.asUintN(t.bits, v);
}

/** Values of the type, extremes included. */
function samplesOf(t: IntType, n: number, rnd: () => number): bigint[] {
  const lo = t.signed ? -(1n << BigInt(t.bits - 1)) : 0n;
  const hi = t.signed ? (1n << BigInt(t.bits - 1)) - 1n : (1n << BigInt(t.bits)) - 1n;
  const out = [lo, hi, 0n, 1n, lo + 1n, hi - 1n, t.signed ? -1n : 2n];
  const span = hi - lo + 1n;
  while (out.length < n) {
    const r = (BigInt(Math.floor(rnd() * 2 ** 32)) << 32n) | BigInt(Math.floor(rnd() * 2 ** 32));
    out.push(lo + (r % span));
  }
  return out;
}

function arrayOf(t: IntType, values: bigint[]): NumericArray {
  const a = new t.ctor(values.length);
  const big = t.bits === 64;
  for (let i = 0; i < values.length; i++) a[i] = big ? values[i]! : Number(values[i]!);
  return a;
}

function asBigints(a: NumericArray): bigint[] {
  return Array.from(a as ArrayLike<number | bigint>, (v) => BigInt(v));
}

const bool = (v: bigint) => v !== 0n;

const INT_EXPECTATIONS: [ReduceOp, (x: bigint, y: bigint) => bigint][] = [
  [SUM, (x, y) => x + y],
  [PROD, (x, y) => x * y],
  // biome-ignore lint/complexity/useMathMinMax: BigInt operands
  [MAX, (x, y) => (x > y ? x : y)],
  // biome-ignore lint/complexity/useMathMinMax: BigInt operands
  [MIN, (x, y) => (x < y ? x : y)],
  [BAND, (x, y) => x & y],
  [BOR, (x, y) => x | y],
  [BXOR, (x, y) => x ^ y],
  [LAND, (x, y) => (bool(x) && bool(y) ? 1n : 0n)],
  [LOR, (x, y) => (bool(x) || bool(y) ? 1n : 0n)],
  [LXOR, (x, y) => (bool(x) !== bool(y) ? 1n : 0n)],
];

describe('built-in operators on integer arrays', () => {
  for (const t of INT_TYPES) {
    for (const [op, math] of INT_EXPECTATIONS) {
      it(`${op.name} over ${t.ctor.name} matches BigInt arithmetic brought into the type`, () => {
        const rnd = prng(t.bits * 131 + op.name.length);
        const xs = samplesOf(t, 200, rnd);
        const ys = samplesOf(t, 200, rnd).reverse();
        const a = arrayOf(t, xs);
        const b = arrayOf(t, ys);
        const out = new t.ctor(xs.length);
        expect(op.check(a)).toBeNull();
        op.apply(a, b, out);
        const expected = xs.map((x, i) => wrap(t, math(x, ys[i]!)));
        expect(asBigints(out)).toEqual(expected);
      });
    }
  }

  it('PROD keeps the exact low 32 bits where a double product would round', () => {
    const a = new Int32Array([0x7fffffff, -0x80000000, 123456789]);
    const b = new Int32Array([0x7fffffff, 3, 987654321]);
    const out = new Int32Array(3);
    PROD.apply(a, b, out);
    // (2^31-1)^2 = 2^62 - 2^32 + 1, whose low 32 bits are 1.
    expect(Array.from(out)).toEqual([
      1,
      -0x80000000,
      Number(BigInt.asIntN(32, 123456789n * 987654321n)),
    ]);
  });

  it('bitwise operators keep the high bit of unsigned 32-bit elements', () => {
    const a = new Uint32Array([0xffffffff, 0x80000000]);
    const b = new Uint32Array([0x80000001, 0x7fffffff]);
    const out = new Uint32Array(2);
    BAND.apply(a, b, out);
    expect(Array.from(out)).toEqual([0x80000001, 0]);
    BOR.apply(a, b, out);
    expect(Array.from(out)).toEqual([0xffffffff, 0xffffffff]);
    BXOR.apply(a, b, out);
    expect(Array.from(out)).toEqual([0x7ffffffe, 0xffffffff]);
  });

  it('a clamped array saturates sums and products instead of wrapping', () => {
    const a = new Uint8ClampedArray([200, 16, 3]);
    const b = new Uint8ClampedArray([100, 16, 4]);
    const out = new Uint8ClampedArray(3);
    SUM.apply(a, b, out);
    expect(Array.from(out)).toEqual([255, 32, 7]);
    PROD.apply(a, b, out);
    expect(Array.from(out)).toEqual([255, 255, 12]);
  });
});

describe('built-in operators on floating-point arrays', () => {
  const FLOAT_EXPECTATIONS: [ReduceOp, (x: number, y: number) => number][] = [
    [SUM, (x, y) => x + y],
    [PROD, (x, y) => x * y],
    [MAX, (x, y) => [x, y].sort((p, q) => p - q)[1]!],
    [MIN, (x, y) => [x, y].sort((p, q) => p - q)[0]!],
  ];
  for (const [op, math] of FLOAT_EXPECTATIONS) {
    it(`${op.name} over Float64Array and Float32Array (rounded to single precision)`, () => {
      const rnd = prng(op.name.charCodeAt(1));
      const xs = Array.from({ length: 100 }, () => (rnd() - 0.5) * 1e6);
      const ys = Array.from({ length: 100 }, () => (rnd() - 0.5) * 1e-3);
      xs.push(0, -0, 1e308, Number.MIN_VALUE);
      ys.push(5, 7, 10, 2);
      const a64 = Float64Array.from(xs);
      const b64 = Float64Array.from(ys);
      const out64 = new Float64Array(xs.length);
      op.apply(a64, b64, out64);
      expect(Array.from(out64)).toEqual(xs.map((x, i) => math(x, ys[i]!)));

      const a32 = Float32Array.from(xs);
      const b32 = Float32Array.from(ys);
      const out32 = new Float32Array(xs.length);
      op.apply(a32, b32, out32);
      expect(Array.from(out32)).toEqual(
        xs.map((x, i) => Math.fround(math(Math.fround(x), Math.fround(ys[i]!)))),
      );
    });
  }

  it('MAX and MIN give NaN whichever operand it is (commutative)', () => {
    const a = new Float64Array([Number.NaN, 1]);
    const b = new Float64Array([1, Number.NaN]);
    for (const op of [MAX, MIN]) {
      const out = new Float64Array(2);
      op.apply(a, b, out);
      expect(Array.from(out)).toEqual([Number.NaN, Number.NaN]);
    }
  });

  it('writes into one of its inputs when out aliases a or b', () => {
    const a = new Float64Array([1, 2, 3]);
    const b = new Float64Array([10, 20, 30]);
    SUM.apply(a, b, a);
    expect(Array.from(a)).toEqual([11, 22, 33]);
    PROD.apply(a, b, b);
    expect(Array.from(b)).toEqual([110, 440, 990]);
  });
});

describe('MAXLOC and MINLOC', () => {
  it('pick the larger / smaller value with its index, the lower index on ties', () => {
    // pairs: (value, index)
    const a = new Float64Array([5, 3, 1, 0, 7, 9, 2.5, 4]);
    const b = new Float64Array([5, 1, 2, 6, 7, 8, 2.25, 1]);
    const out = new Float64Array(8);
    MAXLOC.apply(a, b, out);
    expect(Array.from(out)).toEqual([5, 1, 2, 6, 7, 8, 2.5, 4]);
    MINLOC.apply(a, b, out);
    expect(Array.from(out)).toEqual([5, 1, 1, 0, 7, 8, 2.25, 1]);
  });

  it('give the same answer whichever operand comes first (they are commutative)', () => {
    const a = new Int32Array([4, 2, -1, 7]);
    const b = new Int32Array([4, 9, -1, 3]);
    const ab = new Int32Array(4);
    const ba = new Int32Array(4);
    MAXLOC.apply(a, b, ab);
    MAXLOC.apply(b, a, ba);
    expect(Array.from(ab)).toEqual([4, 2, -1, 3]);
    expect(Array.from(ba)).toEqual(Array.from(ab));
  });

  it('work in place over Float32Array pairs', () => {
    const a = new Float32Array([1.5, 0, -2, 3]);
    const b = new Float32Array([2.5, 1, -3, 2]);
    MINLOC.apply(a, b, a);
    expect(Array.from(a)).toEqual([1.5, 0, -3, 2]);
    MAXLOC.apply(a, b, b);
    expect(Array.from(b)).toEqual([2.5, 1, -3, 2]);
  });

  it('reject other element types and odd lengths with a reason', () => {
    expect(MAXLOC.check(new Uint8Array(4))).toBe(
      'MAXLOC applies to (value, index) pairs interleaved in a Float64Array, Float32Array or Int32Array, not Uint8Array',
    );
    expect(MINLOC.check(new BigInt64Array(2))).toMatch(/not BigInt64Array$/);
    expect(MINLOC.check(new Float64Array(5))).toBe(
      'MINLOC needs (value, index) pairs: an even number of elements, not 5',
    );
    expect(MAXLOC.check(new Int32Array(0))).toBeNull();
  });
});

describe('operator checks', () => {
  it('integer-only operators refuse floating-point arrays, naming the operator and type', () => {
    for (const op of [BAND, BOR, BXOR, LAND, LOR, LXOR]) {
      expect(op.check(new Float64Array(1))).toBe(
        `${op.name} applies to integer arrays, not Float64Array`,
      );
      expect(op.check(new Float32Array(1))).toBe(
        `${op.name} applies to integer arrays, not Float32Array`,
      );
      expect(op.check(new BigUint64Array(1))).toBeNull();
      expect(op.check(new Int16Array(1))).toBeNull();
    }
  });

  it('every built-in refuses what is not a typed array', () => {
    for (const op of Object.values(BUILTIN_OPS)) {
      const reason = op.check(new DataView(new ArrayBuffer(8)) as unknown as NumericArray);
      expect(reason).toMatch(/DataView$/);
    }
  });

  it('arithmetic operators accept every element type', () => {
    for (const op of [SUM, PROD, MAX, MIN]) {
      for (const t of INT_TYPES) expect(op.check(new t.ctor(3))).toBeNull();
      expect(op.check(new Float32Array(3))).toBeNull();
    }
  });

  it('the built-ins are commutative and named as in MPI', () => {
    expect(Object.keys(BUILTIN_OPS)).toEqual([
      'SUM',
      'PROD',
      'MAX',
      'MIN',
      'LAND',
      'LOR',
      'LXOR',
      'BAND',
      'BOR',
      'BXOR',
      'MAXLOC',
      'MINLOC',
    ]);
    for (const [name, op] of Object.entries(BUILTIN_OPS)) {
      expect(op.name).toBe(name);
      expect(op.commutative).toBe(true);
    }
  });
});

describe('user operators', () => {
  /** 2x2 integer matrices, four elements each: associative, not commutative. */
  const matmul = createOp(
    (a, b, out) => {
      for (let i = 0; i < out.length; i += 4) {
        const [p, q, r, s] = [a[i], a[i + 1], a[i + 2], a[i + 3]] as number[];
        const [w, x, y, z] = [b[i], b[i + 1], b[i + 2], b[i + 3]] as number[];
        out[i] = p! * w! + q! * y!;
        out[i + 1] = p! * x! + q! * z!;
        out[i + 2] = r! * w! + s! * y!;
        out[i + 3] = r! * x! + s! * z!;
      }
    },
    false,
    'matmul',
  );

  it('apply the function with a as the left operand', () => {
    const a = new Float64Array([1, 1, 0, 1]);
    const b = new Float64Array([1, 0, 1, 1]);
    const out = new Float64Array(4);
    matmul.apply(a, b, out);
    expect(Array.from(out)).toEqual([2, 1, 1, 1]);
    matmul.apply(b, a, out);
    expect(Array.from(out)).toEqual([1, 1, 1, 2]);
  });

  it('keep their name and commutativity flag and accept any typed array', () => {
    expect(matmul.name).toBe('matmul');
    expect(matmul.commutative).toBe(false);
    const sum = createOp((a, b, out) => SUM.apply(a, b, out), true);
    expect(sum.name).toBe('user operator');
    expect(sum.commutative).toBe(true);
    expect(sum.check(new BigInt64Array(1))).toBeNull();
  });

  it('refuse something that is not a function with ERR_OP', () => {
    let err: unknown;
    try {
      createOp(42 as never, true);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MpiError);
    expect((err as MpiError).errorClass).toBe(ErrorClass.ERR_OP);
  });
});
