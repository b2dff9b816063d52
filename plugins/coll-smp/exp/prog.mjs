import { MPI, SUM } from '@ssi/mpi';

const [op, bytes, iters] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const mpi = await MPI.init();
const w = mpi.COMM_WORLD;
const buf = new Uint8Array(bytes);
const f = new Float32Array(bytes / 4),
  g = new Float32Array(bytes / 4);
const run = async () => {
  if (op === 'bcast') await w.bcast(buf, 0);
  else if (op === 'reduce') await w.reduce(f, SUM, 0, w.rank === 0 ? g : undefined);
  else await w.allreduce(f, SUM, g);
};
for (let i = 0; i < 20; i++) await run();
await w.barrier();
const c0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < iters; i++) await run();
const t1 = performance.now();
const c1 = process.cpuUsage(c0);
await w.barrier();
const mine = new Float64Array([(t1 - t0) / iters, (c1.user + c1.system) / 1000 / iters]);
const all = await w.gather(mine, 0);
if (w.rank === 0) {
  const rows = [];
  for (let r = 0; r < w.size; r++)
    rows.push(`r${r} ${all[2 * r].toFixed(2)}/${all[2 * r + 1].toFixed(2)}`);
  let cpu = 0;
  for (let r = 0; r < w.size; r++) cpu += all[2 * r + 1];
  console.log(`RESULT ${op} wall/cpu ms per call: ${rows.join(' ')} total cpu ${cpu.toFixed(2)}`);
}
await mpi.finalize();
