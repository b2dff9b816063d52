import { ErrorClass, MpiError } from '../errors';
import { type Kernel, kernelPerElementType } from './kernel-copies';
import { SIMD_MIN_ELEMENTS, type SimdOpName, simdKernelFor } from './simd-kernels';
import type { BigArray, FloatArray, IntArray, NumericArray } from './types';

/**
 * A reduction operator (`MPI_Op`). `apply(a, b, out)` computes out[i] = a[i] op b[i] for every
 * element, where `a` holds the operands of lower ranks: implementations combine operands in rank
 * order, so a non-commutative operator gets x0 op x1 op ... op x(n-1). `out` may be `a` or `b`.
 * `check` says why the operator cannot apply to an array (wrong element type, odd length for the
 * value/index pairs of MAXLOC), or null.
 */
export interface ReduceOp {
  readonly name: string;
  readonly commutative: boolean;
  check(array: NumericArray): string | null;
  apply(a: NumericArray, b: NumericArray, out: NumericArray): void;
}

// ---- element families ------------------------------------------------------------------------

type NumberArray = IntArray | FloatArray;
/** The element types MAXLOC/MINLOC accept for their interleaved (value, index) pairs. */
type PairArray = Float64Array | Float32Array | Int32Array;

function isBig(x: NumericArray): x is BigArray {
  return x instanceof BigInt64Array || x instanceof BigUint64Array;
}

function isFloat(x: NumericArray): x is FloatArray {
  return x instanceof Float64Array || x instanceof Float32Array;
}

function isPairArray(x: NumericArray): x is PairArray {
  return x instanceof Float64Array || x instanceof Float32Array || x instanceof Int32Array;
}

/** The name users know the array by (a Buffer says "Buffer"). */
function typeName(x: unknown): string {
  if (x === null || typeof x !== 'object') return typeof x;
  return (x as object).constructor?.name ?? 'object';
}

function notNumeric(name: string, x: unknown): string | null {
  if (ArrayBuffer.isView(x) && !(x instanceof DataView)) return null;
  return `${name} applies to typed arrays, not ${typeName(x)}`;
}

// ---- element kernels: one plain loop per operator and family, no per-element calls ----------
// Each runs as a copy per element type (kernel-copies.ts): they use nothing but their arguments
// and globals.

function sumNumbers(a: NumberArray, b: NumberArray, out: NumberArray): void {
  for (let i = 0, n = out.length; i < n; i++) out[i] = a[i]! + b[i]!;
}
function sumBigs(a: BigArray, b: BigArray, out: BigArray): void {
  for (let i = 0, n = out.length; i < n; i++) out[i] = a[i]! + b[i]!;
}
function prodNumbers(a: NumberArray, b: NumberArray, out: NumberArray): void {
  for (let i = 0, n = out.length; i < n; i++) out[i] = a[i]! * b[i]!;
}
/** Math.imul keeps the exact low 32 bits, which a double product loses above 2^53. */
function prodWrappingInts(a: IntArray, b: IntArray, out: IntArray): void {
  for (let i = 0, n = out.length; i < n; i++) out[i] = Math.imul(a[i]!, b[i]!);
}
function prodBigs(a: BigArray, b: BigArray, out: BigArray): void {
  for (let i = 0, n = out.length; i < n; i++) out[i] = a[i]! * b[i]!;
}
// Math.max/min are symmetric (a NaN operand wins either way), as a commutative operator must be.
function maxNumbers(a: NumberArray, b: NumberArray, out: NumberArray): void {
  for (let i = 0, n = out.length; i < n; i++) out[i] = Math.max(a[i]!, b[i]!);
}
function maxBigs(a: BigArray, b: BigArray, out: BigArray): void {
  for (let i = 0, n = out.length; i < n; i++) {
    const x = a[i]!;
    const y = b[i]!;
    // biome-ignore lint/complexity/useMathMinMax: Math.max does not take BigInts
    out[i] = y > x ? y : x;
  }
}
function minNumbers(a: NumberArray, b: NumberArray, out: NumberArray): void {
  for (let i = 0, n = out.length; i < n; i++) out[i] = Math.min(a[i]!, b[i]!);
}
function minBigs(a: BigArray, b: BigArray, out: BigArray): void {
  for (let i = 0, n = out.length; i < n; i++) {
    const x = a[i]!;
    const y = b[i]!;
    // biome-ignore lint/complexity/useMathMinMax: Math.min does not take BigInts
    out[i] = y < x ? y : x;
  }
}
function landInts(a: IntArray, b: IntArray, out: IntArray): void {
  for (let i = 0, n = out.length; i < n; i++) out[i] = a[i]! !== 0 && b[i]! !== 0 ? 1 : 0;
}
function landBigs(a: BigArray, b: BigArray, out: BigArray): void {
  for (let i = 0, n = out.length; i < n; i++) out[i] = a[i]! !== 0n && b[i]! !== 0n ? 1n : 0n;
}
function lorInts(a: IntArray, b: IntArray, out: IntArray): void {
  for (let i = 0, n = out.length; i < n; i++) out[i] = a[i]! !== 0 || b[i]! !== 0 ? 1 : 0;
}
function lorBigs(a: BigArray, b: BigArray, out: BigArray): void {
  for (let i = 0, n = out.length; i < n; i++) out[i] = a[i]! !== 0n || b[i]! !== 0n ? 1n : 0n;
}
function lxorInts(a: IntArray, b: IntArray, out: IntArray): void {
  for (let i = 0, n = out.length; i < n; i++) out[i] = (a[i]! !== 0) !== (b[i]! !== 0) ? 1 : 0;
}
function lxorBigs(a: BigArray, b: BigArray, out: BigArray): void {
  for (let i = 0, n = out.length; i < n; i++) out[i] = (a[i]! !== 0n) !== (b[i]! !== 0n) ? 1n : 0n;
}
// Bitwise results are signed 32-bit numbers; storing into a Uint32Array reinterprets them.
function bandInts(a: IntArray, b: IntArray, out: IntArray): void {
  for (let i = 0, n = out.length; i < n; i++) out[i] = a[i]! & b[i]!;
}
function bandBigs(a: BigArray, b: BigArray, out: BigArray): void {
  for (let i = 0, n = out.length; i < n; i++) out[i] = a[i]! & b[i]!;
}
function borInts(a: IntArray, b: IntArray, out: IntArray): void {
  for (let i = 0, n = out.length; i < n; i++) out[i] = a[i]! | b[i]!;
}
function borBigs(a: BigArray, b: BigArray, out: BigArray): void {
  for (let i = 0, n = out.length; i < n; i++) out[i] = a[i]! | b[i]!;
}
function bxorInts(a: IntArray, b: IntArray, out: IntArray): void {
  for (let i = 0, n = out.length; i < n; i++) out[i] = a[i]! ^ b[i]!;
}
function bxorBigs(a: BigArray, b: BigArray, out: BigArray): void {
  for (let i = 0, n = out.length; i < n; i++) out[i] = a[i]! ^ b[i]!;
}

/**
 * (value, index) pairs: the larger value wins (MAXLOC) or the smaller (MINLOC); on equal values
 * the lower index wins, as MPI defines. All four inputs are read before writing: `out` may alias.
 */
function locPairs(a: PairArray, b: PairArray, out: PairArray, wantMax: boolean): void {
  for (let i = 0, n = out.length; i < n; i += 2) {
    const av = a[i]!;
    const ai = a[i + 1]!;
    const bv = b[i]!;
    const bi = b[i + 1]!;
    if (av === bv) {
      out[i] = av;
      out[i + 1] = Math.min(ai, bi);
    } else if (wantMax ? bv > av : bv < av) {
      out[i] = bv;
      out[i + 1] = bi;
    } else {
      out[i] = av;
      out[i + 1] = ai;
    }
  }
}

// ---- operator construction ------------------------------------------------------------------

/**
 * Operators defined on every element type: numbers and bigints. Long Float32Array and
 * Float64Array operands go through the WebAssembly SIMD kernel of `simd` (`simd-kernels.ts`,
 * the same bits as the loop, ~3x faster), where the engine has one.
 */
function arithmeticOp(
  name: string,
  onNumbers: (out: NumberArray) => Kernel<NumberArray>,
  onBigs: Kernel<BigArray>,
  simd: SimdOpName,
): ReduceOp {
  const numbers = kernelPerElementType(onNumbers);
  const bigs = kernelPerElementType(() => onBigs);
  const lanes = simdKernelFor(simd);
  return Object.freeze({
    name,
    commutative: true,
    check: (array: NumericArray) => notNumeric(name, array),
    apply(a: NumericArray, b: NumericArray, out: NumericArray): void {
      if (isBig(out)) {
        bigs(out)(a as BigArray, b as BigArray, out);
        return;
      }
      const fast = out.length >= SIMD_MIN_ELEMENTS ? lanes(out) : null;
      if (fast) fast(a as FloatArray, b as FloatArray, out as FloatArray);
      else numbers(out)(a as NumberArray, b as NumberArray, out);
    },
  });
}

/** Operators defined on integers only (logical and bitwise), numbers and bigints. */
function integerOp(name: string, onInts: Kernel<IntArray>, onBigs: Kernel<BigArray>): ReduceOp {
  const ints = kernelPerElementType(() => onInts);
  const bigs = kernelPerElementType(() => onBigs);
  return Object.freeze({
    name,
    commutative: true,
    check(array: NumericArray): string | null {
      const bad = notNumeric(name, array);
      if (bad) return bad;
      return isFloat(array) ? `${name} applies to integer arrays, not ${typeName(array)}` : null;
    },
    apply(a: NumericArray, b: NumericArray, out: NumericArray): void {
      if (isBig(out)) bigs(out)(a as BigArray, b as BigArray, out);
      else ints(out as IntArray)(a as IntArray, b as IntArray, out as IntArray);
    },
  });
}

const locPairsFor = kernelPerElementType<PairArray, typeof locPairs>(() => locPairs);

function locOp(name: string, wantMax: boolean): ReduceOp {
  return Object.freeze({
    name,
    commutative: true,
    check(array: NumericArray): string | null {
      if (!isPairArray(array)) {
        return (
          `${name} applies to (value, index) pairs interleaved in a Float64Array, Float32Array ` +
          `or Int32Array, not ${typeName(array)}`
        );
      }
      if (array.length % 2 !== 0) {
        return `${name} needs (value, index) pairs: an even number of elements, not ${array.length}`;
      }
      return null;
    },
    apply(a: NumericArray, b: NumericArray, out: NumericArray): void {
      const pairs = out as PairArray;
      locPairsFor(pairs)(a as PairArray, b as PairArray, pairs, wantMax);
    },
  });
}

/** Clamped arrays saturate, so they need the true product; floats need the double product. */
function prodFor(out: NumberArray): Kernel<NumberArray> {
  if (isFloat(out) || out instanceof Uint8ClampedArray) return prodNumbers;
  return prodWrappingInts as Kernel<NumberArray>;
}

export const SUM: ReduceOp = arithmeticOp('SUM', () => sumNumbers, sumBigs, 'add');
export const PROD: ReduceOp = arithmeticOp('PROD', prodFor, prodBigs, 'mul');
export const MAX: ReduceOp = arithmeticOp('MAX', () => maxNumbers, maxBigs, 'max');
export const MIN: ReduceOp = arithmeticOp('MIN', () => minNumbers, minBigs, 'min');
export const LAND: ReduceOp = integerOp('LAND', landInts, landBigs);
export const LOR: ReduceOp = integerOp('LOR', lorInts, lorBigs);
export const LXOR: ReduceOp = integerOp('LXOR', lxorInts, lxorBigs);
export const BAND: ReduceOp = integerOp('BAND', bandInts, bandBigs);
export const BOR: ReduceOp = integerOp('BOR', borInts, borBigs);
export const BXOR: ReduceOp = integerOp('BXOR', bxorInts, bxorBigs);
export const MAXLOC: ReduceOp = locOp('MAXLOC', true);
export const MINLOC: ReduceOp = locOp('MINLOC', false);

/** The built-in operators by name. */
export const BUILTIN_OPS = Object.freeze({
  SUM,
  PROD,
  MAX,
  MIN,
  LAND,
  LOR,
  LXOR,
  BAND,
  BOR,
  BXOR,
  MAXLOC,
  MINLOC,
});

/**
 * A user-defined operator (`MPI_Op_create`). `fn(a, b, out)` must set out[i] = a[i] op b[i] for
 * the whole arrays, with `a` the operands of lower ranks and `out` possibly `a` or `b`; it is
 * called with typed arrays of one element type. A non-commutative operator still gets its
 * operands in rank order (every reduction does that here); the flag is kept for modules that
 * would reorder commutative ones.
 */
export function createOp(
  fn: (a: NumericArray, b: NumericArray, out: NumericArray) => void,
  commutative: boolean,
  name = 'user operator',
): ReduceOp {
  if (typeof fn !== 'function') {
    throw new MpiError(
      ErrorClass.ERR_OP,
      `createOp needs a function (a, b, out) => void, not ${typeName(fn)}`,
    );
  }
  return Object.freeze({
    name,
    commutative: Boolean(commutative),
    check: (array: NumericArray) => notNumeric(name, array),
    apply: (a: NumericArray, b: NumericArray, out: NumericArray) => fn(a, b, out),
  });
}
