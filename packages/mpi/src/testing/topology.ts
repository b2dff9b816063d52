/**
 * The topology program: `node topology.js` runs every process-topology call on COMM_WORLD of any
 * size, checking each answer against arithmetic done here and each neighbour by a message: 2-D
 * and 3-D grids (periodic and not, with and without reorder), a grid smaller than the job,
 * cartSub, dup, graphs, distributed graphs, and bad input (the MPI error classes).
 */
import { SUM } from '../coll/ops';
import type { Communicator } from '../comm';
import { PROC_NULL } from '../constants';
import { ERRORS_ARE_FATAL, ERRORS_RETURN } from '../errhandler';
import { ErrorClass } from '../errors';
import { Mpi } from '../mpi';
import { dimsCreate } from '../topology/dims';
import { check, equal, expectError, within } from './checks';

/** Row-major rank of `coords` in `dims`, with wrap-around where periodic (else -1 outside). */
function rankAt(dims: number[], periods: boolean[], coords: number[]): number {
  let r = 0;
  for (let d = 0; d < dims.length; d++) {
    let c = coords[d]!;
    if (periods[d]) c = ((c % dims[d]!) + dims[d]!) % dims[d]!;
    else if (c < 0 || c >= dims[d]!) return -1;
    r = r * dims[d]! + c;
  }
  return r;
}

/**
 * Checks a grid communicator: coordinates, cartRank, and for every dimension a shift whose
 * neighbours prove themselves by sending their rank.
 */
async function checkGrid(cart: Communicator, dims: number[], periods: boolean[], what: string) {
  equal(
    cart.size,
    dims.reduce((p, d) => p * d, 1),
    `${what}: size`,
  );
  const got = cart.cartGet();
  equal([got.dims, got.periods], [dims, periods], `${what}: cartGet`);
  const coords = cart.cartCoords();
  equal(rankAt(dims, periods, coords), cart.rank, `${what}: coordinates are row-major`);
  equal(cart.cartRank(coords), cart.rank, `${what}: cartRank(cartCoords)`);
  for (let d = 0; d < dims.length; d++) {
    for (const disp of [1, -1, 2]) {
      const { source, dest } = cart.cartShift(d, disp);
      const up = [...coords];
      up[d]! += disp;
      const down = [...coords];
      down[d]! -= disp;
      const want = (c: number[]) => {
        const r = rankAt(dims, periods, c);
        return r < 0 ? PROC_NULL : r;
      };
      equal(
        { source, dest },
        { source: want(down), dest: want(up) },
        `${what}: shift(${d}, ${disp})`,
      );
      const from = await within(
        cart.sendrecv(cart.rank, dest, 40 + d, source, 40 + d),
        `${what}: the shift exchange along ${d}`,
      );
      equal(from, source === PROC_NULL ? undefined : source, `${what}: the neighbour at ${source}`);
    }
  }
}

async function grids(world: Communicator): Promise<void> {
  const n = world.size;
  for (const { k, periods, reorder } of [
    { k: 2, periods: [true, false], reorder: false },
    { k: 2, periods: [false, true], reorder: true },
    { k: 3, periods: [true, true, false], reorder: false },
    { k: 1, periods: [true], reorder: true },
  ]) {
    const dims = dimsCreate(n, k);
    const what = `a [${dims}] grid (periods ${periods}, reorder ${reorder})`;
    const cart = await world.cartCreate(dims, periods, reorder);
    check(cart !== null, `${what}: every process is in the grid`);
    await checkGrid(cart, dims, periods, what);
    // Everybody has distinct coordinates (reorder renumbers, never loses anyone).
    const ranks = (await cart.allgather(world.rank)) as number[];
    equal(
      [...ranks].sort((a, b) => a - b),
      [...Array(n).keys()],
      `${what}: a permutation`,
    );
    // The topology survives dup.
    const dup = await cart.dup();
    equal(dup.cartGet(), cart.cartGet(), `${what}: dup keeps the topology`);
    await dup.free();
    if (k >= 2) {
      // cartSub: the rows (keep dimension 1) and the columns (keep dimension 0).
      for (const keep of [0, 1]) {
        const remain = dims.map((_, d) => d === keep);
        const sub = await cart.cartSub(remain);
        check(sub !== null, 'cartSub gives every process a slice');
        equal(sub.cartGet().dims, [dims[keep]], `${what}: sub(${keep}) dims`);
        equal(sub.cartCoords(), [cart.cartCoords()[keep]], `${what}: sub(${keep}) coordinates`);
        // The slice holds exactly the processes that agree on the other coordinates.
        const mine = cart.cartCoords();
        const key = mine.filter((_, d) => d !== keep).join(',');
        const all = (await cart.allgather(key)) as string[];
        equal(sub.size, all.filter((x) => x === key).length, `${what}: sub(${keep}) size`);
        const total = (await sub.allreduce(1, SUM)) as number;
        equal(total, sub.size, `${what}: sub(${keep}) communicates`);
        await sub.free();
      }
    }
    await cart.free();
  }
}

async function partialGrid(world: Communicator): Promise<void> {
  if (world.size < 2) return;
  const cart = await world.cartCreate([world.size - 1], [false]);
  if (world.rank === world.size - 1) equal(cart, null, 'the process beyond the grid gets null');
  else {
    check(cart !== null, 'a process of the grid gets the communicator');
    await checkGrid(cart, [world.size - 1], [false], 'a grid one smaller than the job');
    await cart.free();
  }
}

async function graphs(world: Communicator): Promise<void> {
  const n = world.size;
  // A ring: node i's neighbours are i-1 and i+1.
  const index: number[] = [];
  const edges: number[] = [];
  for (let i = 0; i < n; i++) {
    edges.push((i - 1 + n) % n, (i + 1) % n);
    index.push(edges.length);
  }
  const g = await world.graphCreate(index, edges);
  check(g !== null, 'graphCreate: every process is a node');
  equal(g.graphGet(), { index, edges }, 'graphGet');
  const [left, right] = g.graphNeighbors();
  equal([left, right], [(g.rank - 1 + n) % n, (g.rank + 1) % n], 'graphNeighbors');
  const got = await within(g.sendrecv(g.rank, right!, 50, left!, 50), 'the graph ring exchange');
  equal(got, left, 'the left neighbour');
  const dup = await g.dup();
  equal(dup.graphNeighbors(), g.graphNeighbors(), 'dup keeps the graph');
  await dup.free();
  await g.free();
  const dg = await world.distGraphCreateAdjacent(
    [(world.rank - 1 + n) % n],
    [(world.rank + 1) % n],
  );
  equal(
    dg.distGraphNeighbors(),
    { sources: [(world.rank - 1 + n) % n], destinations: [(world.rank + 1) % n] },
    'distGraphNeighbors',
  );
  await dg.free();
}

async function badInput(world: Communicator): Promise<void> {
  world.errhandler = ERRORS_RETURN;
  await expectError(
    () => world.cartCreate([world.size + 1]),
    ErrorClass.ERR_DIMS,
    'dims product larger than the job',
  );
  await expectError(() => world.cartCreate([0, 2]), ErrorClass.ERR_DIMS, 'a zero dimension');
  await expectError(
    () => world.cartCreate([1], [true, true]),
    ErrorClass.ERR_ARG,
    'periods of another length',
  );
  await expectError(
    () => world.cartCoords(),
    ErrorClass.ERR_TOPOLOGY,
    'cartCoords without a topology',
  );
  await expectError(
    () => world.cartSub([true]),
    ErrorClass.ERR_TOPOLOGY,
    'cartSub without a topology',
  );
  await expectError(
    () => world.graphNeighbors(),
    ErrorClass.ERR_TOPOLOGY,
    'graphNeighbors without a graph',
  );
  await expectError(() => world.graphCreate([1], [5]), ErrorClass.ERR_RANK, 'an edge to no node');
  const cart = (await world.cartCreate([world.size], [false]))!;
  cart.errhandler = ERRORS_RETURN;
  await expectError(() => cart.cartShift(1, 1), ErrorClass.ERR_ARG, 'a shift along no dimension');
  await expectError(
    () => cart.cartRank([world.size]),
    ErrorClass.ERR_RANK,
    'coordinates off a non-periodic grid',
  );
  await expectError(() => cart.graphGet(), ErrorClass.ERR_TOPOLOGY, 'graphGet on a grid');
  await cart.free();
  world.errhandler = ERRORS_ARE_FATAL;
}

async function main(): Promise<void> {
  const mpi = await Mpi.init();
  const world = mpi.COMM_WORLD;
  for (const [name, body] of [
    ['grids', grids],
    ['partial grid', partialGrid],
    ['graphs', graphs],
    ['bad input', badInput],
  ] as const) {
    await body(world);
    await within(world.barrier(), `the barrier after ${name}`, 60_000);
    if (world.rank === 0) console.log(`case ${name} ok`);
  }
  await mpi.finalize();
}

void main();
