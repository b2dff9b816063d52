/**
 * The collectives test program (Ch. 6.3.1): `node collectives.js <case>...` runs the named cases
 * on every rank and finalizes. Every result is checked on its output buffer against values
 * computed here independently (closed formulas or a local fold in rank order). A failed check
 * aborts the job naming the rank and the check. Run it with launchJob or mpirun on 1, 2^N and
 * 2^N+X processes, over any coll module (`--ssi coll <name>`).
 */

import { Keyval } from '../attributes';
import { IN_PLACE } from '../coll/arguments';
import { BAND, createOp, MAX, MAXLOC, MIN, MINLOC, PROD, SUM } from '../coll/ops';
import type { Communicator } from '../comm';
import { CONGRUENT, IDENT, PROC_NULL, ROOT, SIMILAR, UNDEFINED, UNEQUAL } from '../constants';
import { ERRORS_ARE_FATAL, ERRORS_RETURN } from '../errhandler';
import { ErrorClass } from '../errors';
import { Mpi } from '../mpi';
import { check, equal, expectError, within } from './checks';

type Ctx = { mpi: Mpi; world: Communicator; rank: number; size: number };

/** Sizes every data-moving case runs with, in elements: empty, odd, and (per rank) 4 MB. */
const SIZES = [0, 1, 7, 1000, (4 << 20) / 8];

/** The value element i of rank r's contribution has: distinct across ranks and elements. */
const val = (r: number, i: number) => r * 1_000_003 + i * 0.5;

function block(r: number, n: number): Float64Array {
  const a = new Float64Array(n);
  for (let i = 0; i < n; i++) a[i] = val(r, i);
  return a;
}

function checkBlock(a: Float64Array, off: number, r: number, n: number, what: string): void {
  for (let i = 0; i < n; i++) {
    if (a[off + i] !== val(r, i)) {
      check(
        false,
        `${what}: element ${i} of rank ${r}'s block is ${a[off + i]}, expected ${val(r, i)}`,
      );
    }
  }
}

const roots = (size: number) => [...new Set([0, size - 1, Math.floor(size / 2)])];

async function caseBarrier({ world }: Ctx): Promise<void> {
  for (let i = 0; i < 20; i++) await world.barrier();
}

async function caseBcast({ world, rank, size }: Ctx): Promise<void> {
  for (const n of SIZES) {
    for (const root of roots(size)) {
      const buf = rank === root ? block(root, n) : new Float64Array(n);
      const got = await world.bcast(buf, root);
      check(got === buf, 'bcast returns the buffer it filled');
      checkBlock(buf, 0, root, n, `bcast of ${n} from ${root}`);
    }
  }
  const obj = await world.bcast(
    rank === 1 % size ? { hello: 'world', n: [1, 2n] } : null,
    1 % size,
  );
  equal(obj, { hello: 'world', n: [1, 2n] }, 'bcast of an object');
}

async function caseGather({ world, rank, size }: Ctx): Promise<void> {
  for (const n of SIZES) {
    for (const root of roots(size)) {
      const got = (await world.gather(block(rank, n), root)) as Float64Array | undefined;
      if (rank === root) {
        check(
          got instanceof Float64Array && got.length === n * size,
          `gather of ${n}: result size`,
        );
        for (let r = 0; r < size; r++) checkBlock(got, r * n, r, n, `gather of ${n} to ${root}`);
      } else check(got === undefined, 'gather: nothing at non-roots');
      // In place at the root: its block already sits in the receive buffer.
      const into = new Float64Array(n * size);
      if (rank === root) into.set(block(rank, n), root * n);
      await world.gather(
        rank === root ? IN_PLACE : block(rank, n),
        root,
        rank === root ? into : undefined,
      );
      if (rank === root)
        for (let r = 0; r < size; r++) checkBlock(into, r * n, r, n, 'gather in place');
    }
  }
  const objs = await world.gather({ rank, word: 'x'.repeat(rank) }, 0);
  if (rank === 0)
    equal(
      objs,
      Array.from({ length: size }, (_, r) => ({ rank: r, word: 'x'.repeat(r) })),
      'gather of objects',
    );
}

async function caseGatherv({ world, rank, size }: Ctx): Promise<void> {
  const counts = Array.from({ length: size }, (_, r) => (r * 3) % 5);
  const displs = counts.map((_, r) => r * 6 + 1); // gaps between blocks stay untouched
  for (const root of roots(size)) {
    const into = rank === root ? new Float64Array(size * 6 + 1).fill(-1) : undefined;
    await world.gatherv(block(rank, counts[rank]!), counts, displs, root, into);
    if (rank === root) {
      for (let r = 0; r < size; r++)
        checkBlock(into!, displs[r]!, r, counts[r]!, `gatherv to ${root}`);
      equal(into![0], -1, 'gatherv leaves the gaps alone');
    }
  }
}

async function caseScatter({ world, rank, size }: Ctx): Promise<void> {
  for (const n of SIZES) {
    for (const root of roots(size)) {
      let all: Float64Array | null = null;
      if (rank === root) {
        all = new Float64Array(n * size);
        for (let r = 0; r < size; r++) all.set(block(r, n), r * n);
      }
      const mine = new Float64Array(n);
      await world.scatter(all, root, mine);
      checkBlock(mine, 0, rank, n, `scatter of ${n} from ${root}`);
    }
  }
  const got = await world.scatter(
    rank === 0 ? Array.from({ length: size }, (_, r) => `to ${r}`) : null,
    0,
  );
  equal(got, `to ${rank}`, 'scatter of objects');
  const counts = Array.from({ length: size }, (_, r) => r + 1);
  const displs = counts.map((_, r) => r * (size + 2));
  const src = rank === 0 ? new Float64Array(size * (size + 2)) : null;
  if (src) for (let r = 0; r < size; r++) src.set(block(r, counts[r]!), displs[r]!);
  const mine = new Float64Array(counts[rank]!);
  await world.scatterv(src, rank === 0 ? counts : null, rank === 0 ? displs : undefined, 0, mine);
  checkBlock(mine, 0, rank, counts[rank]!, 'scatterv');
}

async function caseAllgather({ world, rank, size }: Ctx): Promise<void> {
  for (const n of SIZES) {
    const got = (await world.allgather(block(rank, n))) as Float64Array;
    for (let r = 0; r < size; r++) checkBlock(got, r * n, r, n, `allgather of ${n}`);
    const into = new Float64Array(n * size);
    into.set(block(rank, n), rank * n);
    await world.allgather(IN_PLACE, into);
    for (let r = 0; r < size; r++) checkBlock(into, r * n, r, n, `allgather of ${n} in place`);
  }
  equal(
    await world.allgather(`r${rank}`),
    Array.from({ length: size }, (_, r) => `r${r}`),
    'allgather of objects',
  );
  const counts = Array.from({ length: size }, (_, r) => (r % 3) + 1);
  const displs = counts.map((_, r) => r * 4);
  const into = new Float64Array(size * 4);
  await world.allgatherv(block(rank, counts[rank]!), counts, displs, into);
  for (let r = 0; r < size; r++) checkBlock(into, displs[r]!, r, counts[r]!, 'allgatherv');
}

async function caseAlltoall({ world, rank, size }: Ctx): Promise<void> {
  // Block j of rank i is val(i * size + j, ...): rank j must find val(i * size + j) at block i.
  for (const n of [0, 3, (1 << 20) / 8]) {
    const send = new Float64Array(n * size);
    for (let j = 0; j < size; j++) send.set(block(rank * size + j, n), j * n);
    const got = (await world.alltoall(send)) as Float64Array;
    for (let i = 0; i < size; i++)
      checkBlock(got, i * n, i * size + rank, n, `alltoall of ${n} per pair`);
  }
  const objs = await world.alltoall(
    Array.from({ length: size }, (_, j) => ({ from: rank, to: j })),
  );
  equal(
    objs,
    Array.from({ length: size }, (_, i) => ({ from: i, to: rank })),
    'alltoall of objects',
  );
  // alltoallv: rank i sends i + j + 1 elements to rank j.
  const sc = Array.from({ length: size }, (_, j) => rank + j + 1);
  const rc = Array.from({ length: size }, (_, i) => i + rank + 1);
  const sd = sc.map((_, j) => sc.slice(0, j).reduce((a, b) => a + b, 0));
  const send = new Float64Array(sc.reduce((a, b) => a + b, 0));
  for (let j = 0; j < size; j++) send.set(block(rank * size + j, sc[j]!), sd[j]!);
  const into = new Float64Array(rc.reduce((a, b) => a + b, 0));
  await world.alltoallv(send, sc, sd, into, rc);
  let off = 0;
  for (let i = 0; i < size; i++) {
    checkBlock(into, off, i * size + rank, rc[i]!, 'alltoallv');
    off += rc[i]!;
  }
  // alltoallw: a different element type per peer.
  const sends = Array.from({ length: size }, (_, j) =>
    j % 2 ? Int32Array.from([rank, j]) : Float64Array.from([rank + 0.5, j]),
  );
  const intos = Array.from({ length: size }, (_, _i) =>
    rank % 2 ? new Int32Array(2) : new Float64Array(2),
  );
  await world.alltoallw(sends, intos);
  for (let i = 0; i < size; i++) {
    const expected = rank % 2 ? [i, rank] : [i + 0.5, rank];
    equal(Array.from(intos[i]!), expected, `alltoallw block from ${i}`);
  }
}

/** x0 op x1 op ... op x(size-1), folded here in rank order: the independent expectation. */
function fold(
  size: number,
  n: number,
  f: (a: number, b: number) => number,
  x: (r: number, i: number) => number,
): number[] {
  return Array.from({ length: n }, (_, i) => {
    let acc = x(0, i);
    for (let r = 1; r < size; r++) acc = f(acc, x(r, i));
    return acc;
  });
}

async function caseReduce({ world, rank, size }: Ctx): Promise<void> {
  const x = (r: number, i: number) => ((r + 1) * (i + 3)) % 17;
  for (const n of [0, 1, 100, (4 << 20) / 8]) {
    const mine = Float64Array.from({ length: n }, (_, i) => x(rank, i));
    for (const root of roots(size)) {
      const got = (await world.reduce(mine, SUM, root)) as Float64Array | undefined;
      if (rank === root) {
        const expected = fold(size, Math.min(n, 200), (a, b) => a + b, x);
        equal(Array.from(got!.subarray(0, 200)), expected, `reduce SUM of ${n} to ${root}`);
      }
    }
    const all = (await world.allreduce(mine, MAX)) as Float64Array;
    equal(
      Array.from(all.subarray(0, 200)),
      fold(size, Math.min(n, 200), Math.max, x),
      `allreduce MAX of ${n}`,
    );
  }
  // Collectives started without awaiting the previous one run one after another, in call order.
  const [sumAll, doubled, word] = await Promise.all([
    world.allreduce(rank, SUM),
    world.allgather(rank * 2),
    world.bcast(rank === 0 ? 'x' : null, 0),
  ]);
  equal(
    [sumAll, doubled, word],
    [(size * (size - 1)) / 2, Array.from({ length: size }, (_, r) => 2 * r), 'x'],
    'overlapping collectives',
  );
  // Scalars, plain arrays, bigints, in place.
  equal(await world.allreduce(rank + 1, SUM), (size * (size + 1)) / 2, 'allreduce of a number');
  equal(await world.allreduce([rank, -rank], MIN), [0, -(size - 1)], 'allreduce of a number array');
  equal(
    await world.allreduce(BigInt(rank + 1), PROD),
    fold(
      size,
      1,
      (a, b) => a * b,
      (r) => r + 1,
    ).map(BigInt)[0],
    'PROD on bigint',
  );
  const big = BigInt64Array.from([2n ** 40n + BigInt(rank)]);
  let band = 2n ** 40n;
  for (let r = 0; r < size; r++) band &= 2n ** 40n + BigInt(r);
  equal((await world.allreduce(big, BAND))[0], band, 'BAND on BigInt64Array');
  const inout = Int32Array.from([rank, 2 * rank]);
  await world.allreduce(IN_PLACE, SUM, inout);
  equal(Array.from(inout), [(size * (size - 1)) / 2, size * (size - 1)], 'allreduce in place');
  // MAXLOC / MINLOC on (value, index) pairs: ties take the lower index.
  const pairs = Float64Array.from([rank % 3, rank, rank % 2 ? -1 : 0, rank]);
  const loc = (await world.allreduce(pairs, MAXLOC)) as Float64Array;
  const maxv = Math.min(2, size - 1); // the largest rank % 3, first at rank maxv
  equal([loc[0], loc[1]], [maxv, maxv], 'MAXLOC');
  const minl = (await world.allreduce(pairs, MINLOC)) as Float64Array;
  equal([minl[2], minl[3]], [size > 1 ? -1 : 0, size > 1 ? 1 : 0], 'MINLOC (second pair)');
  const affine = (r: number) => [r + 2, 3 * r + 1];
  const expectedMap = composeUpTo(size, affine);
  equal(
    await world.allreduce(affine(rank), compose),
    expectedMap,
    'non-commutative user op in rank order',
  );
  for (const root of roots(size)) {
    const got = await world.reduce(affine(rank), compose, root);
    equal(
      got,
      rank === root ? expectedMap : undefined,
      `reduce to ${root} with a non-commutative op`,
    );
  }
  // Floating-point sums whose value depends on the association: the same call gives the same
  // bits every time, reduce to rank 0 and allreduce agree bit for bit, and below the crossover
  // (linear algorithms) the result is the left fold x0 + x1 + ... in rank order.
  const fp = Float64Array.from([0.1 * (rank + 1), 1e16 / (rank + 1), -1e-8 * rank]);
  const a1 = Array.from((await world.allreduce(fp, SUM)) as Float64Array);
  const a2 = Array.from((await world.allreduce(fp, SUM)) as Float64Array);
  equal(a2, a1, 'allreduce gives the same bits every time');
  const b = (await world.reduce(fp, SUM, 0)) as Float64Array | undefined;
  if (rank === 0) equal(Array.from(b!), a1, 'reduce to 0 and allreduce agree bit for bit');
  if (size < 4) {
    const xs = (r: number) => [0.1 * (r + 1), 1e16 / (r + 1), -1e-8 * r];
    const leftFold = [0, 1, 2].map(
      (i) =>
        fold(
          size,
          1,
          (p, q) => p + q,
          (r) => xs(r)[i]!,
        )[0],
    );
    equal(a1, leftFold, 'linear allreduce is the left fold in rank order');
  }
}

/**
 * A non-commutative (associative) user operator: composition of affine maps x -> m*x + c modulo
 * a prime, as (m, c) pairs; the result shows the order operands were combined in.
 */
const P = 10_007;
const compose = createOp((a, b, out) => {
  for (let i = 0; i < out.length; i += 2) {
    const [m1, c1, m2, c2] = [
      a[i] as number,
      a[i + 1] as number,
      b[i] as number,
      b[i + 1] as number,
    ];
    out[i] = (m1 * m2) % P;
    out[i + 1] = (m2 * c1 + c2) % P;
  }
}, false);

/** The maps of ranks 0..count-1 composed in rank order, pair by pair, computed here. */
function composeUpTo(count: number, maps: (r: number) => number[]): number[] {
  const acc = [...maps(0)];
  for (let r = 1; r < count; r++) {
    const next = maps(r);
    for (let i = 0; i < acc.length; i += 2) {
      acc[i] = (acc[i]! * next[i]!) % P;
      acc[i + 1] = (next[i]! * acc[i + 1]! + next[i + 1]!) % P;
    }
  }
  return acc;
}

async function caseScan({ world, rank, size }: Ctx): Promise<void> {
  const x = (r: number) => r * r + 1;
  equal(await world.scan(x(rank), SUM), fold(rank + 1, 1, (a, b) => a + b, x)[0], 'scan SUM');
  const ex = await world.exscan(x(rank), SUM);
  equal(ex, rank === 0 ? undefined : fold(rank, 1, (a, b) => a + b, x)[0], 'exscan SUM');
  const arr = Int32Array.from([rank, -rank, 5]);
  const got = (await world.scan(arr, MAX)) as Int32Array;
  equal(Array.from(got), [rank, 0, 5], 'scan MAX on Int32Array');
  // reduceScatter: block r of the sum, with counts r + 1.
  const counts = Array.from({ length: size }, (_, r) => r + 1);
  const total = counts.reduce((a, b) => a + b, 0);
  const data = Float64Array.from({ length: total }, (_, i) => rank * 10 + i);
  const mine = (await world.reduceScatter(data, counts, SUM)) as Float64Array;
  const start = counts.slice(0, rank).reduce((a, b) => a + b, 0);
  equal(
    Array.from(mine),
    Array.from(
      { length: counts[rank]! },
      (_, k) => 10 * ((size * (size - 1)) / 2) + size * (start + k),
    ),
    'reduceScatter SUM',
  );
  // The non-commutative operator: prefixes and blocks in rank order.
  const maps = (r: number) => [r + 2, 3 * r + 1, 2 * r + 5, r + 7];
  equal(await world.scan(maps(rank), compose), composeUpTo(rank + 1, maps), 'scan in rank order');
  const before = await world.exscan(maps(rank), compose);
  equal(before, rank === 0 ? undefined : composeUpTo(rank, maps), 'exscan in rank order');
  const pairCounts = counts.map((c) => 2 * c);
  const pairsOf = (r: number) =>
    Array.from({ length: 2 * total }, (_, i) => (i % 2 ? 3 * r + i : r + 2 + i) % P);
  const block = (await world.reduceScatter(
    Float64Array.from(pairsOf(rank)),
    pairCounts,
    compose,
  )) as Float64Array;
  const at = 2 * start;
  equal(
    Array.from(block),
    composeUpTo(size, pairsOf).slice(at, at + pairCounts[rank]!),
    'reduceScatter in rank order',
  );
}

async function caseComms({ world, rank, size }: Ctx): Promise<void> {
  const dup = await world.dup();
  equal(dup.compare(world), CONGRUENT, 'dup is congruent');
  equal(world.compare(world), IDENT, 'a communicator is identical to itself');
  equal(await dup.allreduce(1, SUM), size, 'collective on a duplicate');
  // split: even and odd ranks, ordered by descending world rank.
  const half = await world.split(rank % 2, -rank);
  check(half, 'split gives a communicator to every colour');
  const members = Array.from({ length: size }, (_, r) => r)
    .filter((r) => r % 2 === rank % 2)
    .reverse();
  equal(half.size, members.length, 'split size');
  equal(half.rank, members.indexOf(rank), 'split rank ordered by key');
  equal(await half.allgather(rank), members, 'allgather on the split communicator');
  const none = await world.split(rank === 0 ? UNDEFINED : 1);
  check(rank === 0 ? none === null : none !== null, 'UNDEFINED colour gets no communicator');
  // create from a group; groups and translation.
  const g = world.group;
  const evens = g.rangeIncl([[0, size - 1, 2]]);
  equal(evens.size, Math.ceil(size / 2), 'rangeIncl size');
  const sub = await world.create(evens);
  check((rank % 2 === 0) === (sub !== null), 'create: members get the communicator, others null');
  if (sub) equal(sub.group.compare(evens), IDENT, 'the created communicator has the group');
  equal(
    g.translateRanks([0, size - 1], evens),
    [0, (size - 1) % 2 === 0 ? (size - 1) / 2 : UNDEFINED],
    'translateRanks',
  );
  equal(g.union(evens).compare(g), IDENT, 'union with a subset');
  equal(g.difference(evens).size, Math.floor(size / 2), 'difference');
  equal(
    g.incl([...Array(size).keys()].reverse()).compare(g),
    size > 1 ? SIMILAR : IDENT,
    'reversed group is similar',
  );
  equal(g.excl([0]).compare(g), UNEQUAL, 'excl makes an unequal group');
  // Attributes: a key copied on dup, deleted on free.
  const deleted: string[] = [];
  const key = new Keyval<string>({
    copy: (_c, v) => `${v}+copied`,
    delete: (c, v) => deleted.push(`${c.name}:${v}`),
  });
  dup.setAttr(key, 'cached');
  const dup2 = await dup.dup('dup2');
  equal(dup2.getAttr(key), 'cached+copied', 'attribute copied on dup');
  await dup2.free();
  equal(deleted, ['dup2:cached+copied'], 'delete callback on free');
  dup2.errhandler = ERRORS_RETURN;
  await expectError(
    () => dup2.barrier(),
    ErrorClass.ERR_COMM,
    'collective on a freed communicator',
  );
  await expectError(() => dup2.send(1, 0, 0), ErrorClass.ERR_COMM, 'send on a freed communicator');
  // Collectives on the split communicator while point-to-point runs on the world.
  const partner = rank ^ 1;
  const p2p: Promise<unknown>[] = [];
  if (partner < size) {
    p2p.push(world.send(block(rank, 5000), partner, 77));
    p2p.push(world.recv(new Float64Array(5000), partner, 77));
  }
  for (let i = 0; i < 5; i++)
    equal(await half.allreduce(1, SUM), members.length, 'split allreduce during p2p');
  await within(Promise.all(p2p), 'point-to-point next to the split collectives');
}

async function caseIntercomm({ world, rank, size }: Ctx): Promise<void> {
  if (size < 2) return;
  // Low half and high half, leaders 0 and size/2 (in the world).
  const low = rank < size / 2;
  const side = (await world.split(low ? 0 : 1, rank))!;
  const remoteLeader = low ? Math.ceil(size / 2) : 0;
  const inter = await side.createIntercomm(0, world, remoteLeader, 99);
  check(inter.isInter, 'createIntercomm gives an intercommunicator');
  const remoteSize = low ? size - Math.ceil(size / 2) : Math.ceil(size / 2);
  equal(inter.remoteSize, remoteSize, 'remote group size');
  // Point-to-point across: rank k of each side with rank k of the other, where both exist.
  if (side.rank < remoteSize) {
    const got = await inter.sendrecv(`from ${rank}`, side.rank, 5, side.rank, 5);
    const theirWorld = low ? Math.ceil(size / 2) + side.rank : side.rank;
    equal(got, `from ${theirWorld}`, 'intercommunicator point-to-point');
  }
  await inter.barrier();
  // bcast from rank 0 of the low side to the high side.
  const root = low ? (side.rank === 0 ? ROOT : PROC_NULL) : 0;
  const got = await inter.bcast(low ? (side.rank === 0 ? 'over the bridge' : null) : null, root);
  if (!low) equal(got, 'over the bridge', 'intercommunicator bcast');
  equal(
    await inter.allreduce(1, SUM),
    remoteSize,
    'intercommunicator allreduce sums the remote group',
  );
  const theirs = await inter.allgather(rank);
  const remoteWorld = Array.from({ length: size }, (_, r) => r).filter((r) => r < size / 2 !== low);
  equal(theirs, remoteWorld, 'intercommunicator allgather returns the remote group');
  const merged = await inter.merge(!low);
  equal(merged.size, size, 'merge size');
  equal(merged.rank, rank, 'merge puts the low group first');
  equal(
    await merged.allreduce(rank, SUM),
    (size * (size - 1)) / 2,
    'collective on the merged communicator',
  );
}

async function caseBadInput({ world, rank, size }: Ctx): Promise<void> {
  world.errhandler = ERRORS_RETURN;
  await expectError(
    () => world.bcast(new Uint8Array(1), size),
    ErrorClass.ERR_ROOT,
    'bcast with an invalid root',
  );
  await expectError(
    () => world.reduce(1, SUM, -5),
    ErrorClass.ERR_ROOT,
    'reduce with an invalid root',
  );
  await expectError(
    () => world.allreduce(new Float64Array(2), BAND),
    ErrorClass.ERR_OP,
    'BAND on floats',
  );
  await expectError(() => world.allreduce('text', SUM), ErrorClass.ERR_TYPE, 'reducing a string');
  await expectError(
    () => world.allreduce(new Float64Array(2), SUM, new Float64Array(3)),
    ErrorClass.ERR_TRUNCATE,
    'result buffer of the wrong length',
  );
  // Counts matter at the root only: it fails before sending or receiving anything.
  if (rank === 0) {
    await expectError(
      () =>
        world.gatherv(
          new Float64Array(1),
          new Array(size + 1).fill(1),
          undefined,
          0,
          new Float64Array(size + 1),
        ),
      ErrorClass.ERR_COUNT,
      'gatherv with one count too many',
    );
  }
  // Mismatched lengths under ERRORS_RETURN: the ranks with the short buffer get ERR_TRUNCATE
  // (or, below them in a tree, a timeout), nobody aborts. On a duplicate: it may be left unusable.
  // Both duplicates first: after a failed collective the ranks leave it at different times (some
  // only at the timeout), and a collective on the world in between would time out in turn.
  const d = await world.dup();
  const d2 = await world.dup();
  d.errhandler = ERRORS_RETURN;
  const outcome = await d.bcast(rank === 0 ? new Float64Array(4) : new Float64Array(2), 0).then(
    () => 'ok',
    (e: { className?: string }) => e.className,
  );
  check(
    rank === 0 ? outcome === 'ok' : outcome === 'ERR_TRUNCATE' || outcome === 'ERR_OTHER',
    `a bcast into a too-short buffer returns an error, not an abort (rank ${rank}: ${outcome})`,
  );
  // A reduction whose operands differ in length between ranks: errors (or timeouts), no abort,
  // and nobody waits past coll_base_timeout. Also on a duplicate.
  d2.errhandler = ERRORS_RETURN;
  if (size > 1) {
    const res = await within(
      d2.allreduce(new Float64Array(rank === size - 1 ? 3 : 2), SUM).then(
        () => 'ok',
        (e: { className?: string }) => e.className,
      ),
      'an allreduce with mismatched lengths',
      60_000,
    );
    check(
      res === 'ERR_TRUNCATE' || res === 'ERR_OTHER',
      `allreduce of mismatched lengths fails cleanly (rank ${rank}: ${res})`,
    );
  }
  // Only the last rank passes a bad root to a reduce: it gets ERR_ROOT; the root waits for its
  // contribution and gets ERR_OTHER after coll_base_timeout (set low by the test); every other
  // rank finishes one way or the other. Nobody hangs.
  const bad = world.reduce(rank, SUM, rank === size - 1 ? -7 : 0);
  if (rank === size - 1)
    await expectError(() => bad, ErrorClass.ERR_ROOT, 'the rank with a bad root');
  else if (rank === 0) {
    const err = await expectError(() => bad, ErrorClass.ERR_OTHER, 'the root waiting for it');
    check(/coll_base_timeout/.test(err.message), `the timeout names its parameter: ${err.message}`);
  } else
    await within(
      bad.catch(() => {}),
      'a rank next to the mistake',
      60_000,
    );
  if (rank === 0 && size > 1) {
    // What the others may still send would be taken for the next collective's: refused.
    await expectError(() => world.barrier(), ErrorClass.ERR_COMM, 'a collective after a timeout');
  }
  world.errhandler = ERRORS_ARE_FATAL;
}

const CASES: Record<string, (ctx: Ctx) => Promise<void>> = {
  barrier: caseBarrier,
  bcast: caseBcast,
  gather: caseGather,
  gatherv: caseGatherv,
  scatter: caseScatter,
  allgather: caseAllgather,
  alltoall: caseAlltoall,
  reduce: caseReduce,
  scan: caseScan,
  comms: caseComms,
  intercomm: caseIntercomm,
  'bad-input': caseBadInput,
};

/** coll_base_timeout of a run with bad-input unless the caller chose one, in seconds. */
export const BAD_INPUT_TIMEOUT = 10;

/**
 * bad-input waits out coll_base_timeout once (the root of a reduce whose contribution never
 * comes): with the default 300 s the suite would outlast any job's time limit. Unless the
 * caller set the parameter (`ssi: { coll_base_timeout: 3 }`, `--ssi`), a run that includes
 * bad-input uses BAD_INPUT_TIMEOUT, so the documented invocation passes as written.
 */
function useShortTimeoutFor(names: readonly string[]): void {
  const variable = 'LAM_MPI_SSI_coll_base_timeout';
  if (names.includes('bad-input') && process.env[variable] === undefined) {
    process.env[variable] = String(BAD_INPUT_TIMEOUT);
  }
}

async function main(): Promise<void> {
  const names = process.argv.slice(2);
  for (const n of names) {
    if (!CASES[n]) throw new Error(`unknown case "${n}"; known: ${Object.keys(CASES).join(', ')}`);
  }
  useShortTimeoutFor(names);
  const mpi = await Mpi.init();
  const world = mpi.COMM_WORLD;
  const ctx: Ctx = { mpi, world, rank: world.rank, size: world.size };
  for (const name of names) {
    const t0 = Date.now();
    await within(CASES[name]!(ctx), `case ${name}`, 240_000);
    if (name !== 'bad-input') await world.barrier();
    if (world.rank === 0) console.log(`case ${name} ok (${Date.now() - t0} ms)`);
  }
  await mpi.finalize();
}

void main();
