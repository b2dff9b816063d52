import { PROC_NULL } from '../constants';
import { ErrorClass, MpiError } from '../errors';

/**
 * A Cartesian topology (MPI-1 §6.5): a grid of `dims` with wrap-around where `periods` says;
 * ranks in row-major order (the last coordinate varies fastest). Pure arithmetic: the calls that
 * make communicators are in `create.ts`.
 */
export class CartTopology {
  readonly kind = 'cart';

  constructor(
    readonly dims: readonly number[],
    readonly periods: readonly boolean[],
  ) {}

  /** Number of processes of the grid. */
  get size(): number {
    return this.dims.reduce((p, d) => p * d, 1);
  }

  /** `MPI_Cart_coords`. */
  coords(rank: number): number[] {
    if (!Number.isInteger(rank) || rank < 0 || rank >= this.size) {
      throw new MpiError(
        ErrorClass.ERR_RANK,
        `cartCoords: rank ${String(rank)} is not in the grid (ranks 0-${this.size - 1})`,
      );
    }
    const out = new Array<number>(this.dims.length);
    for (let d = this.dims.length - 1; d >= 0; d--) {
      out[d] = rank % this.dims[d]!;
      rank = Math.floor(rank / this.dims[d]!);
    }
    return out;
  }

  /**
   * `MPI_Cart_rank`: periodic coordinates wrap; out of range in a non-periodic dimension is an
   * ERR_RANK error.
   */
  rank(coords: readonly number[]): number {
    if (!Array.isArray(coords) || coords.length !== this.dims.length) {
      throw new MpiError(
        ErrorClass.ERR_ARG,
        `cartRank: give ${this.dims.length} coordinates, one per dimension`,
      );
    }
    let r = 0;
    for (let d = 0; d < this.dims.length; d++) {
      const n = this.dims[d]!;
      let c = coords[d]!;
      if (!Number.isInteger(c)) {
        throw new MpiError(ErrorClass.ERR_ARG, `cartRank: coordinate ${d} is ${String(c)}`);
      }
      if (this.periods[d]) c = ((c % n) + n) % n;
      else if (c < 0 || c >= n) {
        throw new MpiError(
          ErrorClass.ERR_RANK,
          `cartRank: coordinate ${c} of dimension ${d} is outside 0-${n - 1} (not periodic)`,
        );
      }
      r = r * n + c;
    }
    return r;
  }

  /**
   * `MPI_Cart_shift`: the ranks `disp` steps down (source) and up (dest) along `direction` from
   * `rank`; PROC_NULL past the edge of a non-periodic dimension.
   */
  shift(rank: number, direction: number, disp: number): { source: number; dest: number } {
    if (!Number.isInteger(direction) || direction < 0 || direction >= this.dims.length) {
      throw new MpiError(
        ErrorClass.ERR_ARG,
        `cartShift: direction ${String(direction)} is not a dimension (0-${this.dims.length - 1})`,
      );
    }
    if (!Number.isInteger(disp)) {
      throw new MpiError(ErrorClass.ERR_ARG, `cartShift: displacement ${String(disp)}`);
    }
    const here = this.coords(rank);
    const at = (step: number): number => {
      const c = [...here];
      c[direction]! += step;
      const n = this.dims[direction]!;
      if (!this.periods[direction] && (c[direction]! < 0 || c[direction]! >= n)) return PROC_NULL;
      return this.rank(c);
    };
    return { source: at(-disp), dest: at(disp) };
  }
}
