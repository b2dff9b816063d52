// The storage-plan column of `ssi-bench cr` (issue #17): np ranks, each holding <bytes> of state,
// take checkpoints themselves with the plan mpirun was given (--ssi crlam_self_plan …) and report
// per recorded checkpoint:
//   ms      the outcome's time: request → the series complete (for duplicate: copies durable)
//   heldMs  the longest time a rank was held: its onCheckpoint handler (state saved from here on)
//           → its onContinue (the rank goes on); duplicate's copy runs after it
//
//   cr-plans.mjs <bytes> <warmup> <checkpoints>
//
// Rank 0 prints CRPLANS {"np":N,"bytes":B,"ms":[...],"heldMs":[...],"series":[...]}.
// @ssi/mpi is imported from SSI_BENCH_MPI_URL (exported by the benchmark with mpirun -x).
import { randomFillSync } from 'node:crypto';

const { MPI } = await import(process.env.SSI_BENCH_MPI_URL || '@ssi/mpi');

const [bytes, warmup, checkpoints] = process.argv.slice(2).map(Number);
if (![bytes, warmup, checkpoints].every(Number.isInteger) || bytes < 1 || checkpoints < 1)
  throw new Error(
    `usage: cr-plans.mjs <bytes> <warmup> <checkpoints>, got ${process.argv.slice(2)}`,
  );

const mpi = await MPI.init();
const world = mpi.COMM_WORLD;
if (!mpi.cr.enabled) throw new Error('cr-plans.mjs needs --ssi cr self (no cr module selected)');
const state = randomFillSync(new Uint8Array(bytes));
let handlerAt = 0;
let continuedAt = 0;
mpi.cr.onCheckpoint((store) => {
  handlerAt = performance.now();
  store.put('state', state);
});
mpi.cr.onContinue(() => {
  continuedAt = performance.now();
});

const ms = [];
const held = [];
const series = [];
for (let i = 0; i < warmup + checkpoints; i++) {
  await world.barrier();
  const outcome = await mpi.cr.checkpoint();
  if (!outcome.ok) throw new Error(`checkpoint ${i + 1} refused: ${outcome.reason}`);
  // This rank's onContinue may come after the outcome (plans that commit first): wait for it.
  for (const t0 = Date.now(); continuedAt <= handlerAt; ) {
    if (Date.now() - t0 > 60_000) throw new Error(`checkpoint ${i + 1}: no onContinue in 60 s`);
    await new Promise((r) => setTimeout(r, 1));
  }
  state[i % bytes] ^= 1; // the next checkpoint saves other bytes
  if (i >= warmup) {
    ms.push(outcome.ms);
    held.push(continuedAt - handlerAt);
    series.push(outcome.series);
  }
}
const heldMax = await world.allreduce(new Float64Array(held), MPI.MAX);
await world.barrier();
if (world.rank === 0) {
  const line = { np: world.size, bytes, ms, heldMs: [...heldMax], series };
  console.log(`CRPLANS ${JSON.stringify(line)}`);
}
await mpi.finalize();
