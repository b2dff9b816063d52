// 2-D heat equation by Jacobi iteration on an N x N plate whose top edge is held at 100 degrees.
// The plate is cut into blocks on a 2-D Cartesian grid of ranks (MPI.dimsCreate + cartCreate);
// each sweep exchanges one halo row with the neighbours above and below (contiguous) and one halo
// column with the neighbours left and right (a strided vector datatype: no packing by hand).
// Every 50 sweeps the ranks agree on the largest change (allreduce MAX) to stop once the plate
// has settled. The answer does not depend on the number of ranks or the grid.
//   mpirun -np 4 examples/heat.ts [N] [tolerance]
import { MPI } from '@ssi/mpi';

const mpi = await MPI.init();
const n = Number(process.argv[2] ?? 200);
const tolerance = Number(process.argv[3] ?? 1e-3);
const MAX_SWEEPS = 100_000;
const CHECK_EVERY = 50;

const dims = MPI.dimsCreate(mpi.COMM_WORLD.size, 2);
const cart = (await mpi.COMM_WORLD.cartCreate(dims, [false, false], true))!;
const [myRow, myCol] = cart.cartCoords();

/** The block of `n` cells that the `k`-th of `parts` ranks holds: its first cell and its length. */
function block(k: number, parts: number): { first: number; count: number } {
  const base = Math.floor(n / parts);
  return { first: k * base + Math.min(k, n % parts), count: base + (k < n % parts ? 1 : 0) };
}
const { first: r0, count: rows } = block(myRow!, dims[0]!);
const { first: c0, count: cols } = block(myCol!, dims[1]!);

// The block plus a halo of one cell on every side, row-major with `w` cells per row.
const w = cols + 2;
let grid = new Float64Array((rows + 2) * w);
let next = new Float64Array((rows + 2) * w);
if (r0 === 0) {
  grid.fill(100, 0, w); // the hot edge is the top blocks' upper halo, never updated
  next.fill(100, 0, w);
}
const up = cart.cartShift(0, 1); // { source: the block above, dest: the block below }
const side = cart.cartShift(1, 1); // { source: the block to the left, dest: the one to the right }
const column = MPI.Datatype.vector(rows, 1, w, MPI.FLOAT64).commit(); // one cell per row
const row = (g: Float64Array, i: number) => g.subarray(i * w + 1, i * w + 1 + cols);
const col = (g: Float64Array, j: number) => g.subarray(w + j); // column j from row 1 on

async function exchangeHalos(g: Float64Array): Promise<void> {
  // My first row goes up while the row below mine arrives, and the other way; then columns.
  await cart.sendrecv(row(g, 1), up.source, 0, row(g, rows + 1), up.dest, 0);
  await cart.sendrecv(row(g, rows), up.dest, 1, row(g, 0), up.source, 1);
  await cart.sendrecv(
    [col(g, 1), column, 1],
    side.source,
    2,
    [col(g, cols + 1), column, 1],
    side.dest,
    2,
  );
  await cart.sendrecv(
    [col(g, cols), column, 1],
    side.dest,
    3,
    [col(g, 0), column, 1],
    side.source,
    3,
  );
}

// Cells held fixed: the plate's last row (the cold edge) and its first and last columns.
const iLast = Math.min(rows, n - 1 - r0);
const jFirst = c0 === 0 ? 2 : 1;
const jLast = Math.min(cols, n - 2 - c0 + 1);

const start = MPI.wtime();
let sweeps = 0;
let change = Number.POSITIVE_INFINITY;
while (sweeps < MAX_SWEEPS && change > tolerance) {
  await exchangeHalos(grid);
  let local = 0;
  for (let i = 1; i <= iLast; i++) {
    for (let j = jFirst; j <= jLast; j++) {
      const k = i * w + j;
      const v = 0.25 * (grid[k - w]! + grid[k + w]! + grid[k - 1]! + grid[k + 1]!);
      local = Math.max(local, Math.abs(v - grid[k]!));
      next[k] = v;
    }
  }
  [grid, next] = [next, grid];
  sweeps++;
  if (sweeps % CHECK_EVERY === 0) change = (await cart.allreduce(local, MPI.MAX)) as number;
}

// A probe of the result: the temperature in the middle column, at a quarter of the way down.
const probeRow = Math.floor(n / 4);
const probeCol = Math.floor(n / 2);
const mine = probeRow >= r0 && probeRow < r0 + rows && probeCol >= c0 && probeCol < c0 + cols;
const probe = mine ? grid[(probeRow - r0 + 1) * w + (probeCol - c0 + 1)]! : -1;
const probes = (await cart.gather(probe, 0)) as number[] | undefined;
if (cart.rank === 0) {
  const seconds = (MPI.wtime() - start).toFixed(2);
  console.log(
    `${n}x${n} plate on ${cart.size} ranks (a ${dims.join(' x ')} grid): ${sweeps} sweeps in ${seconds} s, last change ${change.toExponential(2)}`,
  );
  console.log(`temperature at row ${probeRow}, middle column: ${Math.max(...probes!).toFixed(3)}`);
}
column.free();
await mpi.finalize();
