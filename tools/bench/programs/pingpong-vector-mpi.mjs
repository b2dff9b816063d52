// The @ssi/mpi columns of `ssi-bench pingpong-vector`: a matrix column of n doubles (every
// `stride`-th element of an n × stride row-major matrix) ping-pongs between 2 ranks.
//
//   pingpong-vector-mpi.mjs <mode> <reps> <stride> <block> <n>:<iters>...
//
// The column is n / block blocks of `block` contiguous doubles, one at the start of each row
// (block 1: a plain column).
// mode: `vector`  send([M, Datatype.vector(n / block, block, stride, FLOAT64), 1]) (run it with
//                 rpi_tcp_gather 0 for the packed path, with the gather thresholds at their
//                 minimum for tcp's gather path); the echo side receives
//                 into the same column of its own matrix with the type and sends it back;
//       `hand`    the same column gathered by a JavaScript loop into a Float64Array, sent, received
//                 into a Float64Array and scattered into the matrix column by a loop (packing by
//                 hand, what a user without datatypes writes);
//       `contig`  n contiguous doubles (no column at all): the floor both others pay on top of.
// Rank 0 prints PINGPONG {"size":bytes,"iters":I,"oneWayNs":[...]} per n, after a warm-up pass of
// a quarter of the iterations; before the first size, 4000 round trips of 8 doubles.
// SSI_BENCH_CPUS="A,B" pins rank 0 to CPU A and rank 1 to CPU B.
import { pin } from './framed.mjs';

const { MPI } = await import(process.env.SSI_BENCH_MPI_URL || '@ssi/mpi');

const [mode, repsArg, strideArg, blockArg, ...points] = process.argv.slice(2);
if (!['vector', 'hand', 'contig'].includes(mode)) throw new Error(`unknown mode "${mode}"`);
const reps = Number(repsArg);
const stride = Number(strideArg);
const block = Number(blockArg);
if (!(block >= 1 && block <= stride)) throw new Error(`block ${blockArg}: 1 to stride (${stride})`);
const plan = points.map((p) => {
  const [n, iters] = p.split(':').map(Number);
  return { n, iters };
});
const maxN = Math.max(8 * block, ...plan.map((p) => p.n));

const mpi = await MPI.init();
const world = mpi.COMM_WORLD;
if (world.size !== 2) throw new Error(`pingpong-vector needs 2 ranks, got ${world.size}`);
const rank = world.rank;
pin(rank);
const peer = 1 - rank;
// Rows of the largest column, `stride` doubles each.
const words = Math.ceil(maxN / block) * stride;
const M = Float64Array.from({ length: words }, (_, i) => i + 0.5);
const R = new Float64Array(words);
const packed = new Float64Array(maxN);
const unpacked = new Float64Array(maxN);

/** One column transfer each way per round; rank 0 returns the one-way time in ns. */
async function rounds(n, count) {
  if (n % block !== 0) throw new Error(`n ${n} is not a multiple of block ${block}`);
  const rows = n / block;
  const col = MPI.Datatype.vector(rows, block, stride, MPI.FLOAT64).commit();
  const out = rank === 0 ? M : R;
  const send = async () => {
    if (mode === 'vector') return world.send([out, col, 1], peer, 0);
    if (mode === 'contig') return world.send(out.subarray(0, n), peer, 0);
    if (block === 1) for (let i = 0; i < n; i++) packed[i] = out[i * stride];
    else
      for (let r = 0; r < rows; r++)
        packed.set(out.subarray(r * stride, r * stride + block), r * block);
    return world.send(packed.subarray(0, n), peer, 0);
  };
  const recv = async () => {
    if (mode === 'vector') return world.recv([R, col, 1], peer, 0);
    if (mode === 'contig') return world.recv(R.subarray(0, n), peer, 0);
    await world.recv(unpacked.subarray(0, n), peer, 0);
    if (block === 1) for (let i = 0; i < n; i++) R[i * stride] = unpacked[i];
    else
      for (let r = 0; r < rows; r++)
        R.set(unpacked.subarray(r * block, (r + 1) * block), r * stride);
  };
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < count; i++) {
    if (rank === 0) {
      await send();
      await recv();
    } else {
      await recv();
      await send();
    }
  }
  const ns = Number(process.hrtime.bigint() - t0) / count / 2;
  col.free();
  if (rank === 0) {
    const last = mode === 'contig' ? n - 1 : (rows - 1) * stride + block - 1;
    if (R[0] !== M[0] || R[last] !== M[last]) throw new Error(`n ${n}: the echo does not match`);
  }
  return ns;
}

await rounds(8 * block, 4000);
for (const { n, iters } of plan) {
  const oneWayNs = [];
  for (let r = 0; r <= reps; r++) {
    const ns = await rounds(n, r === 0 ? Math.max(1, Math.ceil(iters / 4)) : iters);
    if (r > 0) oneWayNs.push(ns);
  }
  if (rank === 0) console.log(`PINGPONG ${JSON.stringify({ size: n * 8, iters, oneWayNs })}`);
}
await mpi.finalize();
