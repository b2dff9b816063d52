// The `tcp rpi` column of `ssi-bench pingpong`: an MPI program for 2 ranks of @ssi/mpi (started by
// the benchmark with `launchJob` and `--ssi rpi tcp`). Rank 0 does `await send(buf, 1, 0); await
// recv(rbuf, 1, 0)`, rank 1 receives into its own buffer and sends it back; receive buffers are
// preallocated and reused.
//
//   pingpong-mpi.mjs <reps> <size>:<iters>...
//
// Rank 0 prints one line per size, PINGPONG {"size":S,"iters":I,"oneWayNs":[...]}: one sample per
// repetition (round trip / 2), after an unrecorded warm-up pass of a quarter of the iterations.
// Before the first size, 4000 unrecorded round trips of 8 bytes warm up the process (the JIT).
//
// @ssi/mpi is imported from SSI_BENCH_MPI_URL when set (the benchmark sets it: tools/bench does
// not depend on @ssi/mpi), else as the bare package name. SSI_BENCH_CPUS="A,B": rank 0 pins itself
// to CPU A, rank 1 to CPU B (taskset, every thread), right after MPI.init.
import { spawnSync } from 'node:child_process';

const { MPI } = await import(process.env.SSI_BENCH_MPI_URL || '@ssi/mpi');

const [reps, ...pairs] = process.argv.slice(2);
const nreps = Number(reps);
const plan = pairs.map((p) => {
  const [size, iters] = p.split(':').map(Number);
  return { size, iters };
});
const maxSize = Math.max(1, ...plan.map((p) => p.size));

/** SSI_BENCH_CPUS="A,B": process 0 pins itself (every thread) to CPU A, process 1 to CPU B. */
function pin(index) {
  const cpus = process.env.SSI_BENCH_CPUS;
  if (!cpus) return;
  const cpu = cpus.split(',')[index];
  const r = spawnSync('taskset', ['-a', '-p', '-c', cpu, String(process.pid)], {
    encoding: 'utf8',
  });
  if (r.status !== 0)
    throw new Error(`taskset -a -p -c ${cpu} ${process.pid}: ${r.error?.message ?? r.stderr}`);
}

const mpi = await MPI.init();
const world = mpi.COMM_WORLD;
if (world.size !== 2) throw new Error(`pingpong needs exactly 2 ranks, got ${world.size}`);
const rank = world.rank;
pin(rank);
const peer = 1 - rank;
const sbuf = new Uint8Array(maxSize);
const rbuf = new Uint8Array(maxSize);
for (let i = 0; i < maxSize; i++) sbuf[i] = (i * 7 + 1) & 0xff;

const WARMUP_BYTES = Math.min(8, maxSize);
for (let i = 0; i < 4000; i++) {
  if (rank === 0) {
    await world.send(sbuf.subarray(0, WARMUP_BYTES), peer, 0);
    await world.recv(rbuf.subarray(0, WARMUP_BYTES), peer, 0);
  } else {
    await world.recv(rbuf.subarray(0, WARMUP_BYTES), peer, 0);
    await world.send(rbuf.subarray(0, WARMUP_BYTES), peer, 0);
  }
}

for (const { size, iters } of plan) {
  const buf = sbuf.subarray(0, size);
  const into = rbuf.subarray(0, size);
  const oneWayNs = [];
  for (let r = 0; r <= nreps; r++) {
    const n = r === 0 ? Math.ceil(iters / 4) : iters; // r = 0: the warm-up pass
    if (rank === 0) {
      if (size > 0) rbuf[0] = rbuf[size - 1] = 0;
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) {
        await world.send(buf, peer, 0);
        await world.recv(into, peer, 0);
      }
      const ns = Number(process.hrtime.bigint() - t0) / n / 2;
      if (size > 0 && (rbuf[0] !== sbuf[0] || rbuf[size - 1] !== sbuf[size - 1]))
        throw new Error(`size ${size}: the echo does not match what was sent`);
      if (r > 0) oneWayNs.push(ns);
    } else {
      for (let i = 0; i < n; i++) {
        await world.recv(into, peer, 0);
        await world.send(into, peer, 0);
      }
    }
  }
  if (rank === 0) console.log(`PINGPONG ${JSON.stringify({ size, iters, oneWayNs })}`);
}
await mpi.finalize();
