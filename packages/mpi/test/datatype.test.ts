import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mpi } from '../src/index';
import {
  BIGUINT64,
  Datatype,
  ERRORS_RETURN,
  ErrorClass,
  FLOAT64,
  INT16,
  INT32,
  MPI,
  MpiError,
  pack,
  packSize,
  Status,
  UINT8,
  UNDEFINED,
  unpack,
} from '../src/index';
import { loopRpi, soloRuntime } from './helpers/loop-rpi';

/**
 * Derived datatypes in one process: layouts (extent, bounds, size) of every constructor, pack
 * and unpack against layouts written out by hand, and sends to self of derived types (the
 * multi-process suite runs over tcp: plugins/rpi-tcp/test/datatypes.test.ts).
 */

const iota = (n: number, from = 0) => Int32Array.from({ length: n }, (_, i) => from + i);

/** Packs `count` × `type` from `buf` and returns the packed elements as int32 values. */
function packed(buf: Int32Array, type: Datatype, count = 1): number[] {
  const out = new Uint8Array(packSize(count, type));
  expect(pack([buf, type.commit(), count], out, 0)).toBe(out.byteLength);
  return Array.from(new Int32Array(out.buffer, 0, out.byteLength / 4));
}

function mpiError(fn: () => unknown): MpiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof MpiError) return err;
    throw err;
  }
  throw new Error('expected an MpiError, nothing was thrown');
}

describe('datatype layouts', () => {
  it('contiguous, vector and hvector: size, extent, bounds and packed order', () => {
    const c = Datatype.contiguous(3, INT32);
    expect([c.size, c.extent, c.lb, c.trueExtent]).toEqual([12, 12, 0, 12]);
    const v = Datatype.vector(3, 2, 4, INT32);
    expect([v.size, v.extent, v.lb, v.trueLb, v.trueExtent]).toEqual([24, 40, 0, 0, 40]);
    expect(packed(iota(20), v)).toEqual([0, 1, 4, 5, 8, 9]);
    // Two instances: the second starts one extent (10 elements) later.
    expect(packed(iota(20), v, 2)).toEqual([0, 1, 4, 5, 8, 9, 10, 11, 14, 15, 18, 19]);
    const h = Datatype.hvector(2, 1, 12, INT32);
    expect([h.size, h.extent]).toEqual([8, 16]);
    expect(packed(iota(4), h)).toEqual([0, 3]);
  });

  it('a negative stride walks backwards and reaches before the view inside its ArrayBuffer', () => {
    const v = Datatype.vector(3, 1, -2, INT32);
    expect([v.lb, v.extent, v.trueLb, v.trueExtent]).toEqual([-16, 20, -16, 20]);
    const all = iota(10);
    const view = all.subarray(6); // element 6 is the view's start
    expect(packed(view, v)).toEqual([6, 4, 2]);
    const err = mpiError(() => packed(all, v)); // would reach 16 bytes before the buffer
    expect(err.errorClass).toBe(ErrorClass.ERR_BUFFER);
    expect(err.message).toMatch(/spans bytes -16 to 4/);
  });

  it('indexed, hindexed (negative displacement) and indexedBlock', () => {
    const ix = Datatype.indexed([2, 1], [5, 1], INT32);
    expect([ix.size, ix.lb, ix.extent]).toEqual([12, 4, 24]);
    expect(packed(iota(8), ix)).toEqual([5, 6, 1]);
    const hx = Datatype.hindexed([1, 2], [-4, 8], INT32);
    expect([hx.lb, hx.extent]).toEqual([-4, 20]);
    expect(packed(iota(10).subarray(1), hx)).toEqual([0, 3, 4]);
    const ib = Datatype.indexedBlock(2, [0, 3, 6], INT32);
    expect(packed(iota(9), ib)).toEqual([0, 1, 3, 4, 6, 7]);
  });

  it('struct over a DataView with byte displacements and mixed element types', () => {
    // A record { int16 a; (2 bytes gap) int32 b; float64 c } of 16 bytes.
    const rec = Datatype.struct([1, 1, 1], [0, 4, 8], [INT16, INT32, FLOAT64]);
    expect([rec.size, rec.extent, rec.elements]).toEqual([14, 16, 3]);
    expect(rec.messageKind).toBe(MPI.DataKind.BUFFER);
    const dv = new DataView(new ArrayBuffer(32));
    for (let i = 0; i < 2; i++) {
      dv.setInt16(16 * i, 7 + i, true);
      dv.setInt32(16 * i + 4, -5 - i, true);
      dv.setFloat64(16 * i + 8, 0.25 + i, true);
    }
    const out = new Uint8Array(packSize(2, rec));
    pack([dv, rec.commit(), 2], out, 0);
    const p = new DataView(out.buffer);
    expect([p.getInt16(0, true), p.getInt32(2, true), p.getFloat64(6, true)]).toEqual([
      7, -5, 0.25,
    ]);
    expect([p.getInt16(14, true), p.getInt32(16, true), p.getFloat64(20, true)]).toEqual([
      8, -6, 1.25,
    ]);
    const back = new DataView(new ArrayBuffer(32));
    expect(unpack(out, 0, [back, rec, 2])).toBe(28);
    expect(back.getFloat64(24, true)).toBe(1.25);
    expect(back.getInt16(2, true)).toBe(0); // the gap is not touched
  });

  it('subarray in C and Fortran order; nested types; resized extents', () => {
    const c = Datatype.subarray([4, 5], [2, 3], [1, 2], INT32, 'C');
    expect([c.size, c.extent, c.lb]).toEqual([24, 80, 0]);
    expect(packed(iota(20), c)).toEqual([7, 8, 9, 12, 13, 14]);
    const f = Datatype.subarray([4, 5], [2, 3], [1, 2], INT32, 'F');
    // Fortran: the first index is fastest; element (i, j) is at i + 4 j.
    expect(packed(iota(20), f)).toEqual([9, 10, 13, 14, 17, 18]);
    // A vector of vectors: 2 planes of a 2×2 corner of 4×4 planes.
    const row = Datatype.vector(2, 2, 4, INT32);
    const planes = Datatype.hvector(2, 1, 64, row);
    expect(packed(iota(32), planes)).toEqual([0, 1, 4, 5, 16, 17, 20, 21]);
    // A column type resized to one element, so that consecutive columns interleave.
    const col = Datatype.resized(Datatype.vector(3, 1, 4, INT32), 0, 4);
    expect(col.extent).toBe(4);
    expect(packed(iota(12), col, 2)).toEqual([0, 4, 8, 1, 5, 9]);
  });

  it('zero counts: empty types, zero instances, nothing packed', () => {
    const empty = Datatype.contiguous(0, INT32);
    expect([empty.size, empty.extent, empty.elements]).toEqual([0, 0, 0]);
    expect(packed(iota(1), empty, 5)).toEqual([]);
    expect(packed(new Int32Array(0), Datatype.vector(2, 1, 3, INT32), 0)).toEqual([]);
    const st = new Status();
    expect(st.getCount(empty)).toBe(0);
  });

  it('getCount and getElements on a partly filled last instance', () => {
    const v = Datatype.vector(2, 3, 4, INT16).commit(); // 6 elements, 12 bytes
    const st = new Status();
    st.byteLength = 12 * 2 + 8; // two instances and 4 of the third's elements
    expect(st.getCount(v)).toBe(UNDEFINED);
    expect(st.getElements(v)).toBe(16);
    st.byteLength = 24;
    expect(st.getCount(v)).toBe(2);
    st.byteLength = 25; // ends inside an element
    expect(st.getElements(v)).toBe(UNDEFINED);
  });

  it('unpack is the inverse of pack; short inputs and small outputs are ERR_TRUNCATE', () => {
    const v = Datatype.vector(4, 1, 3, INT32).commit();
    const out = new Uint8Array(packSize(1, v) + 4);
    new Int32Array(out.buffer)[0] = 99; // something already packed
    expect(pack([iota(10, 100), v], out, 4)).toBe(20);
    const back = new Int32Array(10);
    expect(unpack(out, 4, [back, v])).toBe(20);
    expect(Array.from(back)).toEqual([100, 0, 0, 103, 0, 0, 106, 0, 0, 109]);
    expect(mpiError(() => pack([iota(10), v], new Uint8Array(8), 0)).errorClass).toBe(
      ErrorClass.ERR_TRUNCATE,
    );
    expect(mpiError(() => unpack(out, 8, [back, v])).errorClass).toBe(ErrorClass.ERR_TRUNCATE);
  });

  it('moves 8-byte elements bit for bit (NaN payloads of bigint data through the float64 copy)', () => {
    const src = BigUint64Array.from({ length: 12 }, (_, i) => 0x7ff0000000000001n + BigInt(i));
    src[4] = 0xfff8000000000abcn;
    const v = Datatype.vector(4, 1, 3, BIGUINT64).commit();
    const out = new Uint8Array(packSize(1, v));
    pack([src, v], out, 0);
    expect(Array.from(new BigUint64Array(out.buffer))).toEqual([src[0], src[3], src[6], src[9]]);
    const back = new BigUint64Array(12);
    unpack(out, 0, [back, v]);
    expect([back[0], back[3], back[6], back[9]]).toEqual([src[0], src[3], src[6], src[9]]);
    const hinted = Datatype.hvector(2, 1, 24, BIGUINT64).commit(); // from element 4
    const two = new Uint8Array(16);
    pack([src.subarray(4), hinted], two, 0);
    expect(Array.from(new BigUint64Array(two.buffer))).toEqual([0xfff8000000000abcn, src[7]]);
  });

  it('bad input: the MPI error class, never a crash', () => {
    expect(mpiError(() => Datatype.vector(-1, 1, 1, INT32)).errorClass).toBe(ErrorClass.ERR_COUNT);
    expect(mpiError(() => Datatype.indexed([1, 2], [0], INT32)).errorClass).toBe(
      ErrorClass.ERR_ARG,
    );
    expect(mpiError(() => Datatype.contiguous(2, {} as unknown as Datatype)).errorClass).toBe(
      ErrorClass.ERR_TYPE,
    );
    expect(mpiError(() => Datatype.subarray([4], [5], [0], INT32)).errorClass).toBe(
      ErrorClass.ERR_ARG,
    );
    const t = Datatype.contiguous(2, INT32);
    expect(mpiError(() => pack([iota(2), t], new Uint8Array(8), 0)).message).toMatch(
      /not committed/,
    );
    t.commit().free();
    expect(mpiError(() => pack([iota(2), t], new Uint8Array(8), 0)).message).toMatch(/freed/);
    expect(mpiError(() => INT32.free()).errorClass).toBe(ErrorClass.ERR_TYPE);
    expect(mpiError(() => pack([iota(2), INT32, 3], new Uint8Array(12), 0)).errorClass).toBe(
      ErrorClass.ERR_BUFFER,
    );
  });
});

describe('derived datatypes in sends to self', () => {
  const loop = loopRpi();
  const solo = soloRuntime();
  let mpi: Mpi;

  beforeAll(async () => {
    mpi = await MPI.init({
      runtime: solo.runtime,
      modules: [loop.module],
      ssi: { rpi: 'loop', mpi_base_abort_on_unhandled: 0 },
      searchFrom: [],
    });
    mpi.COMM_WORLD.errhandler = ERRORS_RETURN;
  });

  afterAll(async () => {
    if (!MPI.finalized()) await mpi.finalize();
  });

  it('a column of a matrix to a row, a row to a column, blocking and non-blocking', async () => {
    const w = mpi.COMM_WORLD;
    const n = 5;
    const m = Float64Array.from({ length: n * n }, (_, i) => i);
    const col = Datatype.vector(n, 1, n, FLOAT64).commit();
    const row = new Float64Array(n);
    const r = w.irecv(row, 0, 1);
    await w.send([m.subarray(2), col, 1], 0, 1);
    const st = await r.wait();
    expect(Array.from(row)).toEqual([2, 7, 12, 17, 22]);
    expect(st.count).toBe(n);
    const into = new Float64Array(n * n);
    const r2 = w.irecv([into.subarray(3), col, 1], 0, 2);
    w.isend(row, 0, 2);
    const st2 = await r2.wait();
    expect(st2.getCount(col)).toBe(1);
    expect(st2.count).toBe(1);
    expect([into[3], into[8], into[23], into[4]]).toEqual([2, 7, 22, 0]);
    // Received without a buffer: a Float64Array of the packed elements.
    w.isend([m, col, 1], 0, 3);
    expect(Array.from((await w.recv(0, 3)) as Float64Array)).toEqual([0, 5, 10, 15, 20]);
  });

  it('truncation with a derived type is ERR_TRUNCATE; a mismatched signature ERR_TYPE', async () => {
    const w = mpi.COMM_WORLD;
    const v = Datatype.vector(2, 1, 2, INT32).commit();
    await w.send(iota(6), 0, 4);
    const into = new Int32Array(4);
    const err = await w.recv([into, v, 1], 0, 4).catch((e) => e);
    expect(err).toBeInstanceOf(MpiError);
    expect(err.errorClass).toBe(ErrorClass.ERR_TRUNCATE);
    await w.send(new Float32Array(2), 0, 5);
    const err2 = await w.recv([into, v], 0, 5).catch((e) => e);
    expect(err2.errorClass).toBe(ErrorClass.ERR_TYPE);
    // Bytes match any signature (MPI_BYTE / MPI_PACKED).
    await w.send(new Uint8Array(8).fill(1), 0, 6);
    await w.recv([into, v], 0, 6);
    expect(Array.from(into)).toEqual([0x01010101, 0, 0x01010101, 0]);
    const raw = Datatype.contiguous(2, INT32);
    const err3 = await w.send([iota(2), raw], 0, 7).catch((e) => e);
    expect(err3.errorClass).toBe(ErrorClass.ERR_TYPE);
  });

  it('a partial receive: getElements counts whole elements of the last instance', async () => {
    const w = mpi.COMM_WORLD;
    const v = Datatype.vector(2, 2, 3, INT32).commit(); // 4 elements, extent 20 bytes
    const into = new Int32Array(12).fill(-1);
    await w.send(iota(7, 10), 0, 8);
    const st = await w.recv([into, v, 2], 0, 8);
    expect(st.getCount(v)).toBe(UNDEFINED);
    expect(st.getElements(v)).toBe(7);
    expect(Array.from(into)).toEqual([10, 11, -1, 12, 13, 14, 15, -1, 16, -1, -1, -1]);
  });

  it('persistent requests re-pack and re-unpack at every start; UINT8 strides', async () => {
    const w = mpi.COMM_WORLD;
    const every2 = Datatype.vector(3, 1, 2, UINT8).commit();
    const src = new Uint8Array(6);
    const dst = new Uint8Array(6);
    const s = w.sendInit([src, every2], 0, 9);
    const r = w.recvInit([dst.subarray(1), every2], 0, 9);
    for (let k = 1; k <= 3; k++) {
      src.set([k, 0, k + 1, 0, k + 2, 0]);
      r.start();
      s.start();
      await MPI.Request.waitall([r, s]);
      expect(Array.from(dst)).toEqual([0, k, 0, k + 1, 0, k + 2]);
    }
    s.free();
    r.free();
  });
});
