import { DataKind, elementSize } from '../data';
import { ErrorClass, MpiError } from '../errors';
import { TypeMap } from './typemap';

/** Array order of `Datatype.subarray` (`MPI_ORDER_C`, `MPI_ORDER_FORTRAN`). */
export const ORDER_C = 'C';
export const ORDER_FORTRAN = 'F';
export type ArrayOrder = typeof ORDER_C | typeof ORDER_FORTRAN;

/** One block of a constructor: `count` copies of `type`, the first at byte `disp`. */
interface Block {
  disp: number;
  count: number;
  type: Datatype;
}

/**
 * A datatype (`MPI_Datatype`): a layout of typed elements in a buffer, relative to its start.
 * The predefined ones (`MPI.FLOAT64`, `MPI.INT32`, ... `MPI.BYTE`) are the typed-array element
 * types; derived ones are built with the static constructors (`Datatype.vector(...)`) and must be
 * committed before they are used in communication. Sends and receives take `[buffer, datatype,
 * count]`; displacements are in bytes from the buffer view's first byte and may be negative as
 * long as they stay inside the view's ArrayBuffer (a C pointer into the middle of an array).
 *
 * Unlike C there is no alignment padding: a struct's extent ends at its last byte; use
 * `Datatype.resized` to give it another extent.
 */
export class Datatype {
  /** @internal The compiled type map of one instance. */
  readonly map: TypeMap;
  /** Bytes of data in one instance (`MPI_Type_size`). */
  readonly size: number;
  /** Lower bound (`MPI_Type_get_extent`). */
  readonly lb: number;
  /** Extent: the stride between consecutive instances (`MPI_Type_get_extent`). */
  readonly extent: number;
  /** Lower bound of the bytes actually touched (`MPI_Type_get_true_extent`). */
  readonly trueLb: number;
  /** Span of the bytes actually touched (`MPI_Type_get_true_extent`). */
  readonly trueExtent: number;
  private isCommitted: boolean;
  private isFreed = false;

  /** @internal Use the predefined types or the static constructors. */
  constructor(
    /** Name for messages ("FLOAT64", "vector(3, 1, 4, FLOAT64)"). */
    readonly name: string,
    map: TypeMap,
    bounds: { lb: number; ub: number; trueLb: number; trueUb: number },
    /** Predefined types are committed and cannot be freed. */
    readonly predefined = false,
  ) {
    this.map = map;
    let size = 0;
    for (const len of map.segLen) size += len;
    this.size = size;
    this.lb = bounds.lb;
    this.extent = bounds.ub - bounds.lb;
    this.trueLb = bounds.trueLb;
    this.trueExtent = bounds.trueUb - bounds.trueLb;
    this.isCommitted = predefined;
  }

  /** Upper bound: `lb + extent`. */
  get ub(): number {
    return this.lb + this.extent;
  }

  get committed(): boolean {
    return this.isCommitted;
  }

  get freed(): boolean {
    return this.isFreed;
  }

  /** Number of basic elements in one instance. */
  get elements(): number {
    return this.map.elements;
  }

  /**
   * The element kind (`DataKind`) a message of this type carries: the one element type of a
   * homogeneous type (so that a receiver without a buffer gets e.g. a Float64Array), else BUFFER.
   */
  get messageKind(): number {
    const k = this.map.homogeneousKind;
    return k < 0 ? DataKind.BUFFER : k;
  }

  /** Makes the type usable in communication (`MPI_Type_commit`); returns it. */
  commit(): this {
    this.checkLive('commit');
    this.isCommitted = true;
    return this;
  }

  /**
   * Frees the type (`MPI_Type_free`). Types built from it keep working; using it afterwards is an
   * ERR_TYPE error. Predefined types cannot be freed.
   */
  free(): void {
    if (this.predefined) {
      throw new MpiError(ErrorClass.ERR_TYPE, `Datatype.free: ${this.name} is predefined`);
    }
    this.checkLive('free');
    this.isFreed = true;
  }

  /** A copy (`MPI_Type_dup`), committed when this one is. */
  dup(): Datatype {
    this.checkLive('dup');
    const d = new Datatype(this.name, this.map, {
      lb: this.lb,
      ub: this.ub,
      trueLb: this.trueLb,
      trueUb: this.trueLb + this.trueExtent,
    });
    if (this.isCommitted) d.commit();
    return d;
  }

  /** @internal Throws ERR_TYPE when freed. */
  checkLive(call: string): void {
    if (this.isFreed) {
      throw new MpiError(ErrorClass.ERR_TYPE, `${call}: datatype ${this.name} has been freed`);
    }
  }

  /** @internal Throws ERR_TYPE unless the type may be used in communication. */
  checkUsable(call: string): void {
    this.checkLive(call);
    if (!this.isCommitted) {
      throw new MpiError(
        ErrorClass.ERR_TYPE,
        `${call}: datatype ${this.name} is not committed; call .commit() before using it to communicate`,
      );
    }
  }

  toString(): string {
    return this.name;
  }

  // ---- constructors -------------------------------------------------------------------------

  /** `MPI_Type_contiguous`: `count` consecutive instances of `old`. */
  static contiguous(count: number, old: Datatype): Datatype {
    const call = 'Datatype.contiguous';
    checkCount(count, 'count', call);
    checkType(old, call);
    return build(`contiguous(${count}, ${old.name})`, [{ disp: 0, count, type: old }]);
  }

  /** `MPI_Type_vector`: `count` blocks of `blocklength` instances, `stride` instances apart. */
  static vector(count: number, blocklength: number, stride: number, old: Datatype): Datatype {
    return Datatype.strided('Datatype.vector', count, blocklength, stride, old, old.extent);
  }

  /** `MPI_Type_create_hvector`: as `vector`, with the stride in bytes. */
  static hvector(count: number, blocklength: number, strideBytes: number, old: Datatype): Datatype {
    return Datatype.strided('Datatype.hvector', count, blocklength, strideBytes, old, 1);
  }

  private static strided(
    call: string,
    count: number,
    blocklength: number,
    stride: number,
    old: Datatype,
    unit: number,
  ): Datatype {
    checkCount(count, 'count', call);
    checkCount(blocklength, 'blocklength', call);
    checkInt(stride, 'stride', call);
    checkType(old, call);
    const blocks: Block[] = [];
    for (let i = 0; i < count; i++) {
      blocks.push({ disp: i * stride * unit, count: blocklength, type: old });
    }
    const name = `${call.slice(9)}(${count}, ${blocklength}, ${stride}, ${old.name})`;
    return build(name, blocks);
  }

  /** `MPI_Type_indexed`: block i has `blocklengths[i]` instances at `displacements[i]` extents. */
  static indexed(
    blocklengths: readonly number[],
    displacements: readonly number[],
    old: Datatype,
  ): Datatype {
    return Datatype.listed('Datatype.indexed', blocklengths, displacements, old, old.extent);
  }

  /** `MPI_Type_create_hindexed`: as `indexed`, displacements in bytes. */
  static hindexed(
    blocklengths: readonly number[],
    displacementsBytes: readonly number[],
    old: Datatype,
  ): Datatype {
    return Datatype.listed('Datatype.hindexed', blocklengths, displacementsBytes, old, 1);
  }

  /** `MPI_Type_create_indexed_block`: every block `blocklength` instances long. */
  static indexedBlock(
    blocklength: number,
    displacements: readonly number[],
    old: Datatype,
  ): Datatype {
    const call = 'Datatype.indexedBlock';
    checkCount(blocklength, 'blocklength', call);
    checkArray(displacements, 'displacements', call);
    const lengths = displacements.map(() => blocklength);
    return Datatype.listed(call, lengths, displacements, old, old.extent);
  }

  private static listed(
    call: string,
    lengths: readonly number[],
    disps: readonly number[],
    old: Datatype,
    unit: number,
  ): Datatype {
    checkArray(lengths, 'blocklengths', call);
    checkArray(disps, 'displacements', call);
    checkSameLength(call, ['blocklengths', lengths], ['displacements', disps]);
    checkType(old, call);
    const blocks = lengths.map((count, i) => {
      checkCount(count, `blocklengths[${i}]`, call);
      checkInt(disps[i]!, `displacements[${i}]`, call);
      return { disp: disps[i]! * unit, count, type: old };
    });
    return build(`${call.slice(9)}([${lengths}], [${disps}], ${old.name})`, blocks);
  }

  /**
   * `MPI_Type_create_struct`: block i has `blocklengths[i]` instances of `types[i]` at byte
   * `displacements[i]` (use it over a DataView or ArrayBuffer view of mixed records).
   */
  static struct(
    blocklengths: readonly number[],
    displacementsBytes: readonly number[],
    types: readonly Datatype[],
  ): Datatype {
    const call = 'Datatype.struct';
    checkArray(blocklengths, 'blocklengths', call);
    checkArray(displacementsBytes, 'displacements', call);
    checkArray(types, 'types', call);
    checkSameLength(
      call,
      ['blocklengths', blocklengths],
      ['displacements', displacementsBytes],
      ['types', types],
    );
    const blocks = blocklengths.map((count, i) => {
      checkCount(count, `blocklengths[${i}]`, call);
      checkInt(displacementsBytes[i]!, `displacements[${i}]`, call);
      checkType(types[i]!, call, `types[${i}]`);
      return { disp: displacementsBytes[i]!, count, type: types[i]! };
    });
    return build(`struct([${blocklengths}], [${displacementsBytes}], [${types}])`, blocks);
  }

  /**
   * `MPI_Type_create_subarray`: the block of `subsizes` starting at `starts` of an array of
   * `sizes` elements of `old` in `order` ('C': last index fastest; 'F': first). Its extent is the
   * whole array's, so consecutive instances are consecutive arrays.
   */
  static subarray(
    sizes: readonly number[],
    subsizes: readonly number[],
    starts: readonly number[],
    old: Datatype,
    order: ArrayOrder = ORDER_C,
  ): Datatype {
    const call = 'Datatype.subarray';
    checkArray(sizes, 'sizes', call);
    checkArray(subsizes, 'subsizes', call);
    checkArray(starts, 'starts', call);
    checkSameLength(call, ['sizes', sizes], ['subsizes', subsizes], ['starts', starts]);
    checkType(old, call);
    if (sizes.length === 0) {
      throw new MpiError(ErrorClass.ERR_ARG, `${call}: an array needs at least one dimension`);
    }
    if (order !== ORDER_C && order !== ORDER_FORTRAN) {
      throw new MpiError(ErrorClass.ERR_ARG, `${call}: order is 'C' or 'F', not ${String(order)}`);
    }
    sizes.forEach((n, i) => {
      if (!Number.isInteger(n) || n < 1) {
        throw new MpiError(ErrorClass.ERR_ARG, `${call}: sizes[${i}] = ${String(n)} is not >= 1`);
      }
      const sub = subsizes[i]!;
      const start = starts[i]!;
      if (!Number.isInteger(sub) || sub < 0 || sub > n) {
        throw new MpiError(
          ErrorClass.ERR_ARG,
          `${call}: subsizes[${i}] = ${String(sub)} is not within 0-${n}`,
        );
      }
      if (!Number.isInteger(start) || start < 0 || start + sub > n) {
        throw new MpiError(
          ErrorClass.ERR_ARG,
          `${call}: starts[${i}] = ${String(start)} puts the block past the array (size ${n}, subsize ${sub})`,
        );
      }
    });
    // Fortran order is C order over the reversed dimensions.
    const rev = <T>(a: readonly T[]) => (order === ORDER_C ? [...a] : [...a].reverse());
    const inner = subarrayBlocks(rev(sizes), rev(subsizes), rev(starts), old);
    const all = sizes.reduce((p, n) => p * n, 1);
    const name = `subarray([${sizes}], [${subsizes}], [${starts}], ${old.name}, ${order})`;
    return build(name, inner).resizedTo(name, 0, all * old.extent);
  }

  /** `MPI_Type_create_resized`: the same data with another lower bound and extent. */
  static resized(old: Datatype, lb: number, extent: number): Datatype {
    const call = 'Datatype.resized';
    checkType(old, call);
    checkInt(lb, 'lb', call);
    checkCount(extent, 'extent', call);
    return old.resizedTo(`resized(${old.name}, ${lb}, ${extent})`, lb, extent);
  }

  private resizedTo(name: string, lb: number, extent: number): Datatype {
    return new Datatype(name, this.map, {
      lb,
      ub: lb + extent,
      trueLb: this.trueLb,
      trueUb: this.trueLb + this.trueExtent,
    });
  }
}

/** The blocks of a C-order subarray: one per row of the last (contiguous) dimension. */
function subarrayBlocks(
  sizes: number[],
  subsizes: number[],
  starts: number[],
  old: Datatype,
): Block[] {
  const n = sizes.length;
  const blocks: Block[] = [];
  if (subsizes.some((s) => s === 0)) return blocks;
  const idx = new Array<number>(n - 1).fill(0);
  for (;;) {
    let linear = 0;
    for (let d = 0; d < n; d++)
      linear = linear * sizes[d]! + starts[d]! + (d < n - 1 ? idx[d]! : 0);
    blocks.push({ disp: linear * old.extent, count: subsizes[n - 1]!, type: old });
    let d = n - 2;
    while (d >= 0 && ++idx[d]! === subsizes[d]!) idx[d--] = 0;
    if (d < 0) return blocks;
  }
}

/** A new (uncommitted) type of the blocks, with MPI's bounds: min/max over every copy. */
function build(name: string, blocks: readonly Block[]): Datatype {
  const map = new TypeMap();
  let lb = Infinity;
  let ub = -Infinity;
  let trueLb = Infinity;
  let trueUb = -Infinity;
  for (const { disp, count, type } of blocks) {
    if (count === 0) continue;
    const last = disp + (count - 1) * type.extent;
    lb = Math.min(lb, disp + type.lb, last + type.lb);
    ub = Math.max(ub, disp + type.ub, last + type.ub);
    if (type.size > 0) {
      trueLb = Math.min(trueLb, disp + type.trueLb, last + type.trueLb);
      trueUb = Math.max(
        trueUb,
        disp + type.trueLb + type.trueExtent,
        last + type.trueLb + type.trueExtent,
      );
    }
    map.addCopies(type.map, disp, count, type.extent);
  }
  if (lb === Infinity) lb = ub = 0;
  if (trueLb === Infinity) trueLb = trueUb = 0;
  return new Datatype(name, map, { lb, ub, trueLb, trueUb });
}

/** A predefined type: one element of a typed-array kind. */
export function basicType(name: string, kind: number): Datatype {
  const map = new TypeMap();
  const size = elementSize(kind);
  map.addSegment(0, size);
  map.addRun(kind, size, 1);
  return new Datatype(name, map, { lb: 0, ub: size, trueLb: 0, trueUb: size }, true);
}

function checkType(t: unknown, call: string, what = 'the old type'): asserts t is Datatype {
  if (!(t instanceof Datatype)) {
    throw new MpiError(
      ErrorClass.ERR_TYPE,
      `${call}: ${what} must be a Datatype (MPI.FLOAT64, MPI.INT32, ... or a derived type), not ${typeof t}`,
    );
  }
  t.checkLive(call);
}

function checkCount(n: number, what: string, call: string): void {
  if (!Number.isInteger(n) || n < 0) {
    throw new MpiError(
      ErrorClass.ERR_COUNT,
      `${call}: ${what} = ${String(n)} is not a count (an integer >= 0)`,
    );
  }
}

function checkInt(n: number, what: string, call: string): void {
  if (!Number.isInteger(n)) {
    throw new MpiError(ErrorClass.ERR_ARG, `${call}: ${what} = ${String(n)} is not an integer`);
  }
}

function checkArray(a: unknown, what: string, call: string): void {
  if (!Array.isArray(a)) {
    throw new MpiError(ErrorClass.ERR_ARG, `${call}: ${what} must be an array`);
  }
}

function checkSameLength(call: string, ...arrays: [string, readonly unknown[]][]): void {
  const [first, a] = arrays[0]!;
  for (const [name, b] of arrays.slice(1)) {
    if (b.length !== a.length) {
      throw new MpiError(
        ErrorClass.ERR_ARG,
        `${call}: ${first} has ${a.length} entries but ${name} has ${b.length}; give one per block`,
      );
    }
  }
}
