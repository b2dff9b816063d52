// 2-D heat equation by Jacobi iteration on an N x N plate whose top edge is held at 100 degrees.
// The rows are split into blocks, one per rank; each sweep exchanges one halo row with each
// neighbour (sendrecv), and every 50 sweeps the ranks agree on the largest change (rank 0 adds it
// up and tells everyone) to stop once the plate has settled.
//   mpirun -np 4 examples/heat.ts [N] [tolerance]
import { MPI, PROC_NULL } from '@ssi/mpi';

const mpi = await MPI.init();
const world = mpi.COMM_WORLD;
const { rank, size } = world;
const n = Number(process.argv[2] ?? 200);
const tolerance = Number(process.argv[3] ?? 1e-3);
const MAX_SWEEPS = 100_000;
const CHECK_EVERY = 50;

// Rows [first, first + rows) of the plate live here, plus one halo row above and below.
const base = Math.floor(n / size);
const rows = base + (rank < n % size ? 1 : 0);
const first = rank * base + Math.min(rank, n % size);
let grid = new Float64Array((rows + 2) * n);
let next = new Float64Array((rows + 2) * n);
const row = (g: Float64Array, i: number) => g.subarray(i * n, (i + 1) * n);
if (rank === 0) row(grid, 0).fill(100); // the hot edge is rank 0's upper halo, never updated
if (rank === 0) row(next, 0).fill(100);
const up = rank > 0 ? rank - 1 : PROC_NULL;
const down = rank < size - 1 ? rank + 1 : PROC_NULL;

/** Largest change of any rank: rank 0 collects them in rank order and hands back the maximum. */
async function globalMax(local: number): Promise<number> {
  const v = new Float64Array([local]);
  if (rank === 0) {
    const other = new Float64Array(1);
    for (let r = 1; r < size; r++) {
      await world.recv(other, r, 2);
      v[0] = Math.max(v[0]!, other[0]!);
    }
    for (let r = 1; r < size; r++) await world.send(v, r, 3);
  } else {
    await world.send(v, 0, 2);
    await world.recv(v, 0, 3);
  }
  return v[0]!;
}

const start = MPI.wtime();
let sweeps = 0;
let change = Number.POSITIVE_INFINITY;
while (sweeps < MAX_SWEEPS && change > tolerance) {
  // Halo exchange: my first row goes up while the row below mine arrives, and the other way.
  await world.sendrecv(row(grid, 1), up, 0, row(grid, rows + 1), down, 0);
  await world.sendrecv(row(grid, rows), down, 1, row(grid, 0), up, 1);
  let local = 0;
  // The last row of the plate is its cold edge: held at 0, never updated.
  const lastUpdated = rank === size - 1 ? rows - 1 : rows;
  for (let i = 1; i <= lastUpdated; i++) {
    for (let j = 1; j < n - 1; j++) {
      const k = i * n + j;
      const v = 0.25 * (grid[k - n]! + grid[k + n]! + grid[k - 1]! + grid[k + 1]!);
      local = Math.max(local, Math.abs(v - grid[k]!));
      next[k] = v;
    }
  }
  [grid, next] = [next, grid];
  sweeps++;
  if (sweeps % CHECK_EVERY === 0) change = await globalMax(local);
}

// A probe of the result: the temperature in the middle column, at a quarter of the way down.
const probeRow = Math.floor(n / 4);
const mine = probeRow >= first && probeRow < first + rows;
const probe = new Float64Array([mine ? grid[(probeRow - first + 1) * n + Math.floor(n / 2)]! : -1]);
if (rank === 0) {
  const other = new Float64Array(1);
  for (let r = 1; r < size; r++) {
    await world.recv(other, r, 4);
    if (other[0]! >= 0) probe[0] = other[0]!;
  }
  const seconds = (MPI.wtime() - start).toFixed(2);
  console.log(
    `${n}x${n} plate on ${size} ranks: ${sweeps} sweeps in ${seconds} s, last change ${change.toExponential(2)}`,
  );
  console.log(`temperature at row ${probeRow}, middle column: ${probe[0]!.toFixed(3)}`);
} else {
  await world.send(probe, 0, 4);
}
await mpi.finalize();
