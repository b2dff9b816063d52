import { describe, expect, it } from 'vitest';
import {
  CartTopology,
  dimsCreate,
  ErrorClass,
  GraphTopology,
  MpiError,
  PROC_NULL,
} from '../src/index';

/**
 * The arithmetic of process topologies (dimsCreate, coordinates, shifts, graph checks). The
 * collective calls run in real processes: plugins/rpi-tcp/test/topology.test.ts.
 */

function errorClassOf(fn: () => unknown): number {
  try {
    fn();
  } catch (err) {
    if (err instanceof MpiError) return err.errorClass;
    throw err;
  }
  throw new Error('expected an MpiError, nothing was thrown');
}

describe('dimsCreate', () => {
  it.each([
    [1, 2, [1, 1]],
    [6, 2, [3, 2]],
    [8, 2, [4, 2]],
    [12, 2, [4, 3]],
    [16, 3, [4, 2, 2]],
    [7, 2, [7, 1]],
    [24, 3, [4, 3, 2]],
  ])('%i processes in %i dimensions: %j', (n, k, want) => {
    expect(dimsCreate(n, k)).toEqual(want);
  });

  it('keeps fixed entries and fills the free ones', () => {
    expect(dimsCreate(12, [0, 3, 0])).toEqual([2, 3, 2]);
    expect(dimsCreate(6, [2, 3])).toEqual([2, 3]);
  });

  it('ERR_DIMS when the fixed entries do not divide the processes', () => {
    expect(errorClassOf(() => dimsCreate(10, [3, 0]))).toBe(ErrorClass.ERR_DIMS);
    expect(errorClassOf(() => dimsCreate(6, [2, 2]))).toBe(ErrorClass.ERR_DIMS);
    expect(errorClassOf(() => dimsCreate(6, [-1, 0]))).toBe(ErrorClass.ERR_DIMS);
  });
});

describe('Cartesian arithmetic', () => {
  const t = new CartTopology([2, 3], [false, true]);

  it('coordinates are row-major and cartRank inverts them', () => {
    expect(t.coords(0)).toEqual([0, 0]);
    expect(t.coords(4)).toEqual([1, 1]);
    expect(t.coords(5)).toEqual([1, 2]);
    for (let r = 0; r < 6; r++) expect(t.rank(t.coords(r))).toBe(r);
  });

  it('periodic dimensions wrap; non-periodic ones end in PROC_NULL', () => {
    expect(t.shift(2, 1, 1)).toEqual({ source: 1, dest: 0 }); // (0,2): wraps along dim 1
    expect(t.shift(0, 0, 1)).toEqual({ source: PROC_NULL, dest: 3 });
    expect(t.shift(4, 0, 1)).toEqual({ source: 1, dest: PROC_NULL });
    expect(t.shift(0, 1, -4)).toEqual({ source: 1, dest: 2 }); // -4 ≡ -1 (mod 3)
    expect(t.rank([0, -1])).toBe(2);
    expect(errorClassOf(() => t.rank([2, 0]))).toBe(ErrorClass.ERR_RANK);
    expect(errorClassOf(() => t.shift(0, 2, 1))).toBe(ErrorClass.ERR_ARG);
    expect(errorClassOf(() => t.coords(6))).toBe(ErrorClass.ERR_RANK);
  });
});

describe('graph checks', () => {
  it('neighbours from index/edges; bad graphs are errors naming the entry', () => {
    const g = new GraphTopology([2, 3, 4], [1, 2, 0, 0]);
    expect(g.neighbors(0)).toEqual([1, 2]);
    expect(g.neighbors(2)).toEqual([0]);
    expect(() => GraphTopology.check([2, 3, 4], [1, 2, 0, 0], 3)).not.toThrow();
    expect(errorClassOf(() => GraphTopology.check([2, 1], [1, 0], 3))).toBe(ErrorClass.ERR_ARG);
    expect(errorClassOf(() => GraphTopology.check([1, 2], [1, 5], 3))).toBe(ErrorClass.ERR_RANK);
    expect(errorClassOf(() => GraphTopology.check([1, 2, 3, 4], [1, 0, 0, 0], 3))).toBe(
      ErrorClass.ERR_ARG,
    );
  });
});
