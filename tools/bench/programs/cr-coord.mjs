// The coordination column of `ssi-bench cr` (Fig. 7.14's method): np ranks of @ssi/mpi, started by
// the real mpirun with `--ssi cr self --ssi rpi crtcp`, take checkpoints themselves and report
// how long each took and where the time went.
//
//   cr-coord.mjs <warmup> <checkpoints>
//
// Every rank: a barrier, then `mpi.cr.checkpoint()` (all ranks ask; their requests join one
// series), <warmup> unrecorded times, then <checkpoints> recorded times. Between checkpoints the
// ranks are idle in MPI (the barrier), so what is measured is the protocol: prepare (every rank
// interrupted) → drain and save → commit. Rank 0 prints one line,
// CRCOORD {"np":N,"ms":[...],"phases":[{prepareMs,savedMs,drainMs,saveMs,drainSaveMs,commitMs},...]},
// one entry per recorded checkpoint (the outcome mpirun returned: `ms` and `phases`).
//
// @ssi/mpi is imported from SSI_BENCH_MPI_URL (exported by the benchmark with mpirun -x).
const { MPI } = await import(process.env.SSI_BENCH_MPI_URL || '@ssi/mpi');

const [warmup, checkpoints] = process.argv.slice(2).map(Number);
if (!Number.isInteger(warmup) || !Number.isInteger(checkpoints) || checkpoints < 1)
  throw new Error(`usage: cr-coord.mjs <warmup> <checkpoints>, got ${process.argv.slice(2)}`);

const mpi = await MPI.init();
const world = mpi.COMM_WORLD;
if (!mpi.cr.enabled) throw new Error('cr-coord.mjs needs --ssi cr self (no cr module selected)');
// The application's own state: a small record, as a program that checkpoints itself writes one.
let taken = 0;
mpi.cr.onCheckpoint((store) => store.put('taken', taken));

const ms = [];
const phases = [];
for (let i = 0; i < warmup + checkpoints; i++) {
  await world.barrier();
  const outcome = await mpi.cr.checkpoint();
  if (!outcome.ok) throw new Error(`checkpoint ${i + 1} refused: ${outcome.reason}`);
  if (!outcome.phases) throw new Error(`checkpoint ${i + 1}: the outcome has no phases`);
  taken++;
  if (i >= warmup) {
    ms.push(outcome.ms);
    phases.push(outcome.phases);
  }
}
await world.barrier();
if (world.rank === 0) console.log(`CRCOORD ${JSON.stringify({ np: world.size, ms, phases })}`);
await mpi.finalize();
