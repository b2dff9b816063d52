// Pi by numerical integration of 4/(1+x^2) over [0,1]: each rank sums every size-th interval,
// rank 0 adds the partial sums in rank order (the same result every run).
//   mpirun -np 4 examples/pi.ts [intervals]
import { MPI } from '@ssi/mpi';

const mpi = await MPI.init();
const world = mpi.COMM_WORLD;
const intervals = Number(process.argv[2] ?? 10_000_000);
if (!Number.isInteger(intervals) || intervals < 1) {
  if (world.rank === 0) console.error(`pi: the number of intervals must be a positive integer`);
  await mpi.abort(2);
}

const start = MPI.wtime();
const h = 1 / intervals;
let sum = 0;
for (let i = world.rank; i < intervals; i += world.size) {
  const x = h * (i + 0.5);
  sum += 4 / (1 + x * x);
}
const partial = new Float64Array([h * sum]);

if (world.rank === 0) {
  let pi = partial[0]!;
  const other = new Float64Array(1);
  for (let r = 1; r < world.size; r++) {
    await world.recv(other, r, 0);
    pi += other[0]!;
  }
  const ms = ((MPI.wtime() - start) * 1000).toFixed(1);
  console.log(
    `pi is approximately ${pi.toFixed(15)}, error ${Math.abs(pi - Math.PI).toExponential(2)}`,
  );
  console.log(`${intervals} intervals on ${world.size} ranks in ${ms} ms`);
} else {
  await world.send(partial, 0, 0);
}
await mpi.finalize();
