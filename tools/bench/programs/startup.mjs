// The @ssi/mpi job of `ssi-bench startup`; programs/startup-ts.ts is its TypeScript twin (the same
// statements with types) and c/startup.c the Open MPI baseline. Two modes:
//
//   startup.mjs hello   MPI.init, an allreduce (SUM of the ranks, checked), then every rank prints
//                       STARTUP {"rank":r,"size":n,"sum":s,"rssKiB":k}  (its RSS at the end) and
//                       finalizes.
//   startup.mjs first <pings>
//                       ranks 0 and 1, which have exchanged nothing since MPI.init, time their
//                       first round trip, then <pings> more on the connection now open; rank 0 also
//                       times one raw TCP connect + accept on loopback, and prints
//                       FIRST {"firstNs":f,"openNs":[...],"tcpConnectNs":c}
//                       Rank 0 waits 100 ms after MPI.init first so that rank 1 sits in its
//                       receive (its start-up skew is not counted as message time).
//
// @ssi/mpi is imported from SSI_BENCH_MPI_URL when set (the benchmark sets it), else by name.
import { connect, createServer } from 'node:net';

const { MPI, SUM } = await import(process.env.SSI_BENCH_MPI_URL || '@ssi/mpi');
const [mode = 'hello', pingsArg = '50'] = process.argv.slice(2);

const mpi = await MPI.init();
const world = mpi.COMM_WORLD;
const rank = world.rank;
const size = world.size;

/** Nanoseconds of one TCP connect + accept on loopback (a server of this process). */
async function tcpConnectNs() {
  const server = createServer(() => {});
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const accepted = new Promise((ok) => server.once('connection', (s) => ok(s)));
  const t0 = process.hrtime.bigint();
  const sock = connect(server.address().port, '127.0.0.1');
  await new Promise((ok) => sock.once('connect', ok));
  const peer = await accepted;
  const ns = Number(process.hrtime.bigint() - t0);
  sock.destroy();
  peer.destroy();
  await new Promise((ok) => server.close(ok));
  return ns;
}

if (mode === 'hello') {
  const sum = (await world.allreduce(new Float64Array([rank]), SUM))[0];
  if (sum !== (size * (size - 1)) / 2) throw new Error(`rank ${rank}: allreduce gave ${sum}`);
  const rssKiB = Math.round(process.memoryUsage().rss / 1024);
  console.log(`STARTUP ${JSON.stringify({ rank, size, sum, rssKiB })}`);
} else if (mode === 'first') {
  const pings = Number(pingsArg);
  if (size < 2) throw new Error('first: needs 2 ranks or more');
  const ball = new Uint8Array(8);
  if (rank === 0) {
    await new Promise((ok) => setTimeout(ok, 100));
    let t0 = process.hrtime.bigint();
    await world.send(ball, 1, 7);
    await world.recv(ball, 1, 7);
    const firstNs = Number(process.hrtime.bigint() - t0);
    const openNs = [];
    for (let i = 0; i < pings; i++) {
      t0 = process.hrtime.bigint();
      await world.send(ball, 1, 7);
      await world.recv(ball, 1, 7);
      openNs.push(Number(process.hrtime.bigint() - t0));
    }
    console.log(`FIRST ${JSON.stringify({ firstNs, openNs, tcpConnectNs: await tcpConnectNs() })}`);
  } else if (rank === 1) {
    for (let i = 0; i <= pings; i++) {
      await world.recv(ball, 0, 7);
      await world.send(ball, 0, 7);
    }
  }
} else {
  throw new Error(`startup: mode hello or first, got "${mode}"`);
}
await mpi.finalize();
