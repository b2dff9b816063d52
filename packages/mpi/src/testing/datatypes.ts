/**
 * The datatype suite (the MPI-1 test programs' datatype chapter): `node datatypes.js <case>...`
 * runs the named cases on every rank, with a barrier between cases, and finalizes. Every
 * constructor, nested types, negative strides and displacements, zero counts, truncation,
 * getElements on partial receives, pack/unpack against typed receives, every send mode and the
 * collectives. Run it with `launchJob` (or mpirun) over any rpi module and a coll module.
 */

import { MAX, SUM } from '../coll/ops';
import type { Communicator } from '../comm';
import { UNDEFINED } from '../constants';
import { Datatype } from '../datatype/datatype';
import { pack, packSize, unpack } from '../datatype/pack-api';
import { FLOAT64, INT16, INT32, UINT8 } from '../datatype/predefined';
import type { TypedMessage } from '../datatype/typed-message';
import { ERRORS_ARE_FATAL, ERRORS_RETURN } from '../errhandler';
import { ErrorClass } from '../errors';
import { Mpi } from '../mpi';
import { Request } from '../request';
import { check, equal, expectError, within } from './checks';

type Ctx = {
  mpi: Mpi;
  world: Communicator;
  rank: number;
  size: number;
  next: number;
  prev: number;
};

/** Bytes of `n` float64 with values that name rank and position (never zero). */
function filled(n: number, rank: number): Float64Array {
  return Float64Array.from({ length: n }, (_, i) => rank * 100_000 + i + 1);
}

/** The packed form of `count` × `type` at `buf`: the reference every receive is checked with. */
function packedOf(buf: ArrayBufferView, type: Datatype, count: number): Uint8Array {
  const out = new Uint8Array(packSize(count, type));
  pack([buf, type, count], out, 0);
  return out;
}

/**
 * Which bytes of `buf`'s whole ArrayBuffer the type map covers (1) and which it does not (0):
 * negative displacements reach before the view.
 */
function maskOf(buf: ArrayBufferView, type: Datatype, count: number): Uint8Array {
  const mask = new Uint8Array(buf.buffer.byteLength);
  const view = new Uint8Array(mask.buffer, buf.byteOffset, buf.byteLength);
  unpack(new Uint8Array(packSize(count, type)).fill(1), 0, [view, type, count]);
  return mask;
}

/**
 * Checks that `got` (received into a zeroed buffer) holds the sender's data at the type map and
 * zeros everywhere else.
 */
function checkReceived(
  got: ArrayBufferView,
  type: Datatype,
  count: number,
  expected: Uint8Array,
  what: string,
): void {
  equal(Buffer.from(packedOf(got, type, count)), Buffer.from(expected), `${what}: data`);
  const mask = maskOf(got, type, count);
  const bytes = new Uint8Array(got.buffer, 0, got.buffer.byteLength);
  for (let i = 0; i < bytes.length; i++) {
    if (mask[i] === 0 && bytes[i] !== 0) {
      check(false, `${what}: byte ${i} outside the type map was written (${bytes[i]})`);
    }
  }
}

/**
 * The types of the suite, each with the buffer length (float64 elements) and the offset of the
 * view (for negative displacements) one instance needs.
 */
function suiteTypes(): { name: string; type: Datatype; length: number; at: number }[] {
  const col = Datatype.vector(8, 1, 8, FLOAT64);
  const rec = Datatype.struct([1, 2, 1], [0, 4, 16], [INT16, INT32, FLOAT64]);
  return [
    { name: 'contiguous', type: Datatype.contiguous(5, FLOAT64), length: 5, at: 0 },
    { name: 'vector (a matrix column)', type: col, length: 64, at: 0 },
    {
      name: 'vector with a negative stride',
      type: Datatype.vector(4, 2, -3, FLOAT64),
      length: 12,
      at: 9,
    },
    { name: 'hvector', type: Datatype.hvector(3, 2, 40, FLOAT64), length: 15, at: 0 },
    { name: 'indexed', type: Datatype.indexed([2, 0, 3], [6, 1, 0], FLOAT64), length: 8, at: 0 },
    {
      name: 'hindexed, negative',
      type: Datatype.hindexed([1, 2], [16, -24], FLOAT64),
      length: 8,
      at: 3,
    },
    { name: 'indexedBlock', type: Datatype.indexedBlock(2, [4, 0, 8], FLOAT64), length: 10, at: 0 },
    { name: 'struct of mixed elements', type: rec, length: 3, at: 0 },
    {
      name: 'subarray C',
      type: Datatype.subarray([4, 6], [2, 3], [1, 2], FLOAT64),
      length: 24,
      at: 0,
    },
    {
      name: 'subarray Fortran',
      type: Datatype.subarray([4, 6], [2, 3], [1, 2], FLOAT64, 'F'),
      length: 24,
      at: 0,
    },
    { name: 'nested: vector of columns', type: Datatype.hvector(2, 1, 16, col), length: 66, at: 0 },
    { name: 'resized column', type: Datatype.resized(col, 0, 8), length: 64, at: 0 },
  ];
}

/** Every constructor, 1 and 3 instances, around the ring; the receiver checks layout and data. */
async function caseConstructors(ctx: Ctx): Promise<void> {
  for (const { name, type, length, at } of suiteTypes()) {
    type.commit();
    for (const count of [1, 3]) {
      const span = length + Math.max(0, type.extent / 8) * (count - 1) + 1;
      const mine = filled(span, ctx.rank).subarray(at);
      const got = new Float64Array(span).subarray(at);
      const r = ctx.world.irecv([got, type, count], ctx.prev, 1);
      await ctx.world.send([mine, type, count], ctx.next, 1);
      const st = await within(r.wait(), `the ${name} receive`);
      equal(st.getCount(type), count, `${name}: getCount`);
      equal(st.getElements(type), count * type.elements, `${name}: getElements`);
      const theirs = filled(span, ctx.prev).subarray(at);
      checkReceived(got, type, count, packedOf(theirs, type, count), `${name} × ${count}`);
    }
    type.free();
  }
}

/** A typed send received into a plain array and back: the packed form is the wire form. */
async function caseInterop(ctx: Ctx): Promise<void> {
  const col = Datatype.vector(6, 1, 6, FLOAT64).commit();
  const m = filled(36, ctx.rank);
  const plain = new Float64Array(6);
  const r = ctx.world.irecv(plain, ctx.prev, 2);
  await ctx.world.send([m.subarray(1), col, 1], ctx.next, 2);
  const st = await r.wait();
  equal(st.count, 6, 'plain receive of a column: count');
  const theirs = filled(36, ctx.prev);
  equal(
    Array.from(plain),
    [1, 7, 13, 19, 25, 31].map((i) => theirs[i]),
    'column as a row',
  );
  // MPI.pack of two items, sent as bytes, received with the matching derived types.
  const row = filled(6, ctx.rank);
  const buf = new Uint8Array(packSize(1, col) + packSize(6, FLOAT64));
  let pos = pack([m, col, 1], buf, 0);
  pos = pack([row, FLOAT64, 6], buf, pos);
  equal(pos, buf.byteLength, 'pack position');
  const into = new Uint8Array(buf.byteLength);
  const r2 = ctx.world.irecv(into, ctx.prev, 3);
  await ctx.world.send(buf, ctx.next, 3);
  await r2.wait();
  const m2 = new Float64Array(36);
  const row2 = new Float64Array(6);
  pos = unpack(into, 0, [m2, col, 1]);
  unpack(into, pos, [row2, FLOAT64, 6]);
  equal([m2[0], m2[6], m2[30]], [theirs[0], theirs[6], theirs[30]], 'unpacked column');
  equal(Array.from(row2), Array.from(filled(6, ctx.prev)), 'unpacked row');
  // A received value without a buffer: a Float64Array of the packed elements.
  const cols = Datatype.resized(col, 0, 8).commit(); // consecutive columns
  ctx.world.isend([m, cols, 2], ctx.next, 4);
  const v = (await ctx.world.recv(ctx.prev, 4)) as Float64Array;
  check(v instanceof Float64Array, 'a homogeneous type arrives as its element type');
  equal(
    [v[0], v[1], v[6], v[11]],
    [theirs[0], theirs[6], theirs[1], theirs[31]],
    'column 0, then 1',
  );
  equal(v.length, 12, 'elements of two columns');
}

/** Every send mode, sendrecv and sendrecvReplace, persistent requests, with a derived type. */
async function caseModes(ctx: Ctx): Promise<void> {
  const w = ctx.world;
  const t = Datatype.vector(100, 3, 5, FLOAT64).commit();
  const n = 500;
  const theirs = packedOf(filled(n, ctx.prev), t, 1);
  const modes = ['send', 'ssend', 'bsend', 'isend', 'issend'] as const;
  const mpi = ctx.mpi;
  mpi.attachBuffer(packSize(1, t) + 1024);
  for (const mode of modes) {
    const got = new Float64Array(n);
    const r = w.irecv([got, t, 1], ctx.prev, 10);
    const data: TypedMessage = [filled(n, ctx.rank), t, 1];
    if (mode === 'isend' || mode === 'issend') await w[mode](data, ctx.next, 10).wait();
    else await w[mode](data, ctx.next, 10);
    await within(r.wait(), `the ${mode} receive`);
    checkReceived(got, t, 1, theirs, `${mode} of a vector`);
  }
  await mpi.detachBuffer();
  const got = new Float64Array(n);
  await w.sendrecv([filled(n, ctx.rank), t, 1], ctx.next, 11, [got, t, 1], ctx.prev, 11);
  checkReceived(got, t, 1, theirs, 'sendrecv');
  const inout = filled(n, ctx.rank);
  await w.sendrecvReplace([inout, t, 1], ctx.next, 12, ctx.prev, 12);
  equal(inout[0], filled(n, ctx.prev)[0], 'sendrecvReplace: replaced');
  equal(inout[3], filled(n, ctx.rank)[3], 'sendrecvReplace: outside the type kept');
  const src = new Float64Array(n);
  const dst = new Float64Array(n);
  const s = w.sendInit([src, t, 1], ctx.next, 13);
  const r = w.recvInit([dst, t, 1], ctx.prev, 13);
  for (let k = 0; k < 3; k++) {
    src.set(filled(n, ctx.rank + k));
    r.start();
    s.start();
    await within(Request.waitall([r, s]), 'a persistent pass');
    checkReceived(dst, t, 1, packedOf(filled(n, ctx.prev + k), t, 1), `persistent pass ${k}`);
  }
  s.free();
  r.free();
}

/** A large column (rendezvous in every rpi): 1 Mi doubles of a 1 Mi × 2 matrix. */
async function caseLarge(ctx: Ctx): Promise<void> {
  const rows = 1 << 20;
  const col = Datatype.vector(rows, 1, 2, FLOAT64).commit();
  const m = filled(2 * rows, ctx.rank);
  const got = new Float64Array(2 * rows);
  const r = ctx.world.irecv([got, col, 1], ctx.prev, 20);
  await ctx.world.send([m.subarray(1), col, 1], ctx.next, 20);
  const st = await within(r.wait(), 'the 8 MB column');
  equal(st.getElements(col), rows, 'elements');
  const theirs = filled(2 * rows, ctx.prev);
  for (let i = 0; i < 2 * rows; i += 2) {
    if (got[i] !== theirs[i + 1] || got[i + 1] !== 0) {
      check(false, `large column: row ${i / 2} holds ${got[i]}, ${got[i + 1]}`);
    }
  }
}

/** Zero counts, empty types, truncation, partial receives, bad input: the MPI error classes. */
async function caseEdges(ctx: Ctx): Promise<void> {
  const w = ctx.world;
  w.errhandler = ERRORS_RETURN;
  const v = Datatype.vector(3, 2, 4, INT32).commit(); // 6 elements, 24 bytes, extent 40
  // Zero counts and empty types.
  const empty = Datatype.contiguous(0, INT32).commit();
  const r0 = w.irecv([new Int32Array(0), v, 0], ctx.prev, 30);
  await w.send([new Int32Array(0), empty, 7], ctx.next, 30);
  const st0 = await r0.wait();
  equal([st0.byteLength, st0.getCount(v), st0.getElements(v)], [0, 0, 0], 'zero count');
  // Truncation: a larger message into a derived type.
  const r1 = w.irecv([new Int32Array(10), v, 1], ctx.prev, 31);
  await w.send(
    Int32Array.from({ length: 8 }, (_, i) => i),
    ctx.next,
    31,
  );
  await expectError(() => r1.wait(), ErrorClass.ERR_TRUNCATE, 'truncation into a vector');
  // A partial receive: 2 instances posted, 1 and 2/3 arrive.
  const got = new Int32Array(20);
  const r2 = w.irecv([got, v, 2], ctx.prev, 32);
  await w.send(
    Int32Array.from({ length: 10 }, (_, i) => i + 1),
    ctx.next,
    32,
  );
  const st2 = await r2.wait();
  equal(st2.getCount(v), UNDEFINED, 'getCount of a partial receive');
  equal(st2.getElements(v), 10, 'getElements of a partial receive');
  equal(Array.from(got.subarray(10, 20)), [7, 8, 0, 0, 9, 10, 0, 0, 0, 0], 'partial instance');
  // Mismatched signatures (float64 into an int32 type), uncommitted and freed types.
  const r3 = w.irecv([new Int32Array(10), v, 1], ctx.prev, 33);
  await w.send(new Float64Array(3), ctx.next, 33);
  await expectError(() => r3.wait(), ErrorClass.ERR_TYPE, 'mismatched type signature');
  const raw = Datatype.vector(2, 1, 2, INT32);
  await expectError(
    () => w.send([new Int32Array(4), raw, 1], ctx.next, 34),
    ErrorClass.ERR_TYPE,
    'uncommitted type',
  );
  await expectError(
    () => w.irecv([new Int32Array(4), raw, 1], ctx.prev, 34),
    ErrorClass.ERR_TYPE,
    'uncommitted receive type',
  );
  await expectError(
    () => w.send([new Int32Array(4), v, 1], ctx.next, 34),
    ErrorClass.ERR_BUFFER,
    'a type map past the buffer',
  );
  await expectError(
    () => w.send([new Int32Array(40), v, -1], ctx.next, 34),
    ErrorClass.ERR_COUNT,
    'a negative count',
  );
  // UINT8 types of odd strides through the byte-wise copy.
  const odd = Datatype.vector(5, 3, 7, UINT8).commit();
  const bytes = Uint8Array.from({ length: 35 }, (_, i) => (i * 7 + ctx.rank) & 255);
  const gotBytes = new Uint8Array(35);
  const r4 = w.irecv([gotBytes, odd, 1], ctx.prev, 35);
  await w.send([bytes, odd, 1], ctx.next, 35);
  await r4.wait();
  const theirs = Uint8Array.from({ length: 35 }, (_, i) => (i * 7 + ctx.prev) & 255);
  checkReceived(gotBytes, odd, 1, packedOf(theirs, odd, 1), 'odd byte strides');
  w.errhandler = ERRORS_ARE_FATAL;
}

/** The collectives with a column type (an n × size matrix, one column per rank). */
async function caseCollectives(ctx: Ctx): Promise<void> {
  const w = ctx.world;
  const n = 4;
  const size = ctx.size;
  // One column of an n × size row-major matrix, resized so that column j+1 follows column j.
  const col = Datatype.resized(Datatype.vector(n, 1, size, FLOAT64), 0, 8).commit();
  const mine = Float64Array.from({ length: n }, (_, i) => ctx.rank * 10 + i + 1);
  const expectedMatrix = new Float64Array(n * size);
  for (let r = 0; r < size; r++)
    for (let i = 0; i < n; i++) expectedMatrix[i * size + r] = r * 10 + i + 1;
  // allgather: every rank's row becomes a column of everyone's matrix.
  const m = new Float64Array(n * size);
  await w.allgather(mine, [m, col, 1]);
  equal(Array.from(m), Array.from(expectedMatrix), 'allgather into columns');
  // gather at the last rank.
  const root = size - 1;
  const g = new Float64Array(n * size);
  await w.gather(mine, root, [g, col, 1]);
  if (ctx.rank === root) equal(Array.from(g), Array.from(expectedMatrix), 'gather into columns');
  // scatter the columns back from the root.
  const back = new Float64Array(n);
  await w.scatter(ctx.rank === root ? [expectedMatrix, col, 1] : null, root, back);
  equal(Array.from(back), Array.from(mine), 'scatter of columns');
  // bcast of the root's first column.
  const b = ctx.rank === 0 ? expectedMatrix.slice() : new Float64Array(n * size);
  await w.bcast([b, col, 1], 0);
  const column0 = Array.from({ length: n }, (_, i) => b[i * size]);
  equal(column0, [1, 2, 3, 4], 'bcast of a column');
  if (ctx.rank !== 0 && size > 1) equal(b[1], 0, 'bcast: other columns untouched');
  // alltoall: column j of my matrix to rank j, into column i of its matrix.
  const src = Float64Array.from({ length: n * size }, (_, k) => ctx.rank * 1000 + k);
  const dst = new Float64Array(n * size);
  await w.alltoall([src, col, 1], [dst, col, 1]);
  for (let j = 0; j < size; j++) {
    for (let i = 0; i < n; i++) {
      equal(dst[i * size + j], j * 1000 + i * size + ctx.rank, `alltoall (${i}, ${j})`);
    }
  }
  // gatherv / scatterv: each rank's column (of the allgathered matrix) at column r.
  const counts = Array.from({ length: size }, () => 1);
  const gv = new Float64Array(n * size);
  await w.gatherv([m.subarray(ctx.rank), col, 1], counts, undefined, root, [gv, col, 1]);
  if (ctx.rank === root) equal(Array.from(gv), Array.from(expectedMatrix), 'gatherv of columns');
  const sv = new Float64Array(n);
  await w.scatterv(
    ctx.rank === root ? [expectedMatrix, col, 1] : null,
    counts,
    undefined,
    root,
    sv,
  );
  equal(Array.from(sv), Array.from(mine), 'scatterv of columns');
  // allreduce of a column with SUM into a column; reduce with MAX.
  const sum = new Float64Array(n * size);
  await w.allreduce([expectedMatrix, col, 1], SUM, [sum, col, 1]);
  const want = Array.from({ length: n }, (_, i) => size * (i + 1));
  equal(
    Array.from({ length: n }, (_, i) => sum[i * size]),
    want,
    'allreduce of a column',
  );
  const mx = new Float64Array(n);
  await w.reduce([m.subarray(ctx.rank), col, 1], MAX, 0, mx);
  if (ctx.rank === 0) {
    equal(
      Array.from(mx),
      Array.from({ length: n }, (_, i) => (size - 1) * 10 + i + 1),
      'reduce MAX',
    );
  }
  // A reduction over a mixed struct is an ERR_TYPE error (no element type to combine).
  w.errhandler = ERRORS_RETURN;
  const rec = Datatype.struct([1, 1], [0, 4], [INT32, FLOAT64]).commit();
  await expectError(
    () => w.allreduce([new DataView(new ArrayBuffer(12)), rec, 1], SUM),
    ErrorClass.ERR_TYPE,
    'reduce of a struct',
  );
  w.errhandler = ERRORS_ARE_FATAL;
}

const CASES: Record<string, (ctx: Ctx) => Promise<void>> = {
  constructors: caseConstructors,
  interop: caseInterop,
  modes: caseModes,
  large: caseLarge,
  edges: caseEdges,
  collectives: caseCollectives,
};

async function main(): Promise<void> {
  const names = process.argv.slice(2);
  for (const n of names) {
    if (!CASES[n]) throw new Error(`unknown case "${n}"; known: ${Object.keys(CASES).join(', ')}`);
  }
  const mpi = await Mpi.init();
  const world = mpi.COMM_WORLD;
  const ctx: Ctx = {
    mpi,
    world,
    rank: world.rank,
    size: world.size,
    next: (world.rank + 1) % world.size,
    prev: (world.rank - 1 + world.size) % world.size,
  };
  for (const name of names) {
    const t0 = Date.now();
    await CASES[name]!(ctx);
    await within(world.barrier(), `the barrier after case ${name}`, 120_000);
    if (world.rank === 0) console.log(`case ${name} ok (${Date.now() - t0} ms)`);
  }
  await mpi.finalize();
}

void main();
