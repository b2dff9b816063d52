import { ErrorClass, MpiError } from '../errors';

/**
 * `MPI_Dims_create`: fills the zero entries of `dims` so that the product of all entries is
 * `nnodes`, as balanced as possible and in non-increasing order; non-zero entries are kept.
 * Returns a new array. ERR_DIMS when the fixed entries do not divide `nnodes`.
 */
export function dimsCreate(nnodes: number, dims: readonly number[] | number): number[] {
  const out = typeof dims === 'number' ? new Array<number>(dims).fill(0) : [...dims];
  if (!Number.isInteger(nnodes) || nnodes < 1) {
    throw new MpiError(ErrorClass.ERR_ARG, `dimsCreate: nnodes = ${String(nnodes)} is not >= 1`);
  }
  let fixed = 1;
  const free: number[] = [];
  out.forEach((d, i) => {
    if (!Number.isInteger(d) || d < 0) {
      throw new MpiError(
        ErrorClass.ERR_DIMS,
        `dimsCreate: dims[${i}] = ${String(d)}; give 0 (to be chosen) or a fixed size >= 1`,
      );
    }
    if (d === 0) free.push(i);
    else fixed *= d;
  });
  if (nnodes % fixed !== 0 || (free.length === 0 && fixed !== nnodes)) {
    throw new MpiError(
      ErrorClass.ERR_DIMS,
      `dimsCreate: the fixed dimensions [${out}] (product ${fixed}) do not divide ${nnodes} processes`,
    );
  }
  if (free.length === 0) return out;
  // The largest prime factors first, each to the currently smallest free dimension.
  const sizes = new Array<number>(free.length).fill(1);
  for (const p of primeFactors(nnodes / fixed).reverse()) {
    let smallest = 0;
    for (let k = 1; k < sizes.length; k++) if (sizes[k]! < sizes[smallest]!) smallest = k;
    sizes[smallest]! *= p;
  }
  sizes.sort((a, b) => b - a);
  free.forEach((i, k) => {
    out[i] = sizes[k]!;
  });
  return out;
}

/** Prime factors in increasing order, with repetition. */
function primeFactors(n: number): number[] {
  const out: number[] = [];
  for (let p = 2; p * p <= n; p++) {
    while (n % p === 0) {
      out.push(p);
      n /= p;
    }
  }
  if (n > 1) out.push(n);
  return out;
}
