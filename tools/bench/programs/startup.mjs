// The @ssi/mpi job of `ssi-bench startup`; programs/startup-ts.ts is its TypeScript twin (the same
// statements with types) and c/startup.c the Open MPI baseline. Two modes:
//
//   startup.mjs hello   MPI.init, an allreduce (SUM of the ranks, checked), then every rank prints
//                       STARTUP {"rank":r,"size":n,"sum":s,"rssKiB":k}  (its RSS at the end) and
//                       finalizes.
//   startup.mjs first <pings> [named|any|warm]
//                       ranks 0 and 1, which have exchanged nothing since MPI.init, time their
//                       first round trip (rank 0 sends, rank 1 answers), then <pings> more on the
//                       connection now open; rank 0 also times one raw TCP connect + accept on
//                       loopback, and prints
//                       FIRST {"variant":v,"firstNs":f,"openNs":[...],"asleepNs":a,"tcpConnectNs":c}
//                       Rank 0 waits 100 ms before its first send so that rank 1 sits in its
//                       receive (its start-up skew is not counted as message time). asleepNs:
//                       one more round trip on the open connection after rank 0 waited 100 ms
//                       again, so that rank 1 sleeps in its receive as it did for the first
//                       (a message to a sleeping peer, with the connection and the code warm:
//                       first - asleep is what the first use of the pair cost). Variants:
//                         named  rank 1's first receive names rank 0 (posted right after
//                                MPI.init; tcp's rpi_tcp_recv_dial dials rank 0 from there)
//                         any    rank 1's first receive is ANY_SOURCE (nothing dials before
//                                rank 0's send: a lazy connection is set up inside the timing)
//                         warm   (4 ranks or more) as any, but right after MPI.init rank 0 and
//                                rank 1 each complete a round trip with another rank (0 sends to
//                                2 and gets its answer; 3 sends to 1 and gets its answer), so
//                                their send, receive and connection code ran once already
//                       (programs/startup-ts.ts has the first mode without variants; the benchmark
//                       runs the first mode with this file only.)
//
// @ssi/mpi is imported from SSI_BENCH_MPI_URL when set (the benchmark sets it), else by name.
import { connect, createServer } from 'node:net';

const { MPI, SUM } = await import(process.env.SSI_BENCH_MPI_URL || '@ssi/mpi');
const [mode = 'hello', pingsArg = '50'] = process.argv.slice(2);

const mpi = await MPI.init();
const world = mpi.COMM_WORLD;
const rank = world.rank;
const size = world.size;

/** Round trips between asleep and the raw TCP connect (see there). */
const REWARM_PINGS = 5;

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

/**
 * The warm variant's prelude, right after MPI.init: rank 0 sends to rank 2 and gets its answer
 * (rank 0 dials, as it does for its timed send), rank 3 sends to rank 1 and gets its answer (rank
 * 1 accepts, as it does then). Both are short waits, like the other variants' (a long MPI wait
 * would shrink the polling window of the timed round trip: mpi_base_poll_us); rank 0's 100 ms
 * sleep that follows covers rank 1's prelude as it covers rank 1's start in the other variants.
 */
async function warmUpWithOthers(ball) {
  if (rank === 0) {
    await world.send(ball, 2, 5);
    await world.recv(ball, 2, 5);
  } else if (rank === 2) {
    await world.recv(ball, MPI.ANY_SOURCE, 5);
    await world.send(ball, 0, 5);
  } else if (rank === 3) {
    await world.send(ball, 1, 5);
    await world.recv(ball, 1, 5);
  } else if (rank === 1) {
    await world.recv(ball, MPI.ANY_SOURCE, 5);
    await world.send(ball, 3, 5);
  }
}

if (mode === 'hello') {
  const sum = (await world.allreduce(new Float64Array([rank]), SUM))[0];
  if (sum !== (size * (size - 1)) / 2) throw new Error(`rank ${rank}: allreduce gave ${sum}`);
  const rssKiB = Math.round(process.memoryUsage().rss / 1024);
  console.log(`STARTUP ${JSON.stringify({ rank, size, sum, rssKiB })}`);
} else if (mode === 'first') {
  const pings = Number(pingsArg);
  const variant = process.argv[4] ?? 'named';
  if (!['named', 'any', 'warm'].includes(variant))
    throw new Error(`first: variant named, any or warm, got "${variant}"`);
  const least = variant === 'warm' ? 4 : 2;
  if (size < least) throw new Error(`first ${variant}: needs ${least} ranks or more`);
  const ball = new Uint8Array(8);
  if (variant === 'warm') await warmUpWithOthers(ball);
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
    await new Promise((ok) => setTimeout(ok, 100));
    t0 = process.hrtime.bigint();
    await world.send(ball, 1, 7);
    await world.recv(ball, 1, 7);
    const asleepNs = Number(process.hrtime.bigint() - t0);
    // The raw connect is timed hot, right after round trips, as it was before asleep existed:
    // a few more first (after the 100 ms wait it would run colder and make the bound larger;
    // before asleep, its garbage could make asleep pay a collection).
    for (let i = 0; i < REWARM_PINGS; i++) {
      await world.send(ball, 1, 7);
      await world.recv(ball, 1, 7);
    }
    const tcpNs = await tcpConnectNs();
    console.log(
      `FIRST ${JSON.stringify({ variant, firstNs, openNs, asleepNs, tcpConnectNs: tcpNs })}`,
    );
  } else if (rank === 1) {
    await world.recv(ball, variant === 'named' ? 0 : MPI.ANY_SOURCE, 7);
    await world.send(ball, 0, 7);
    for (let i = 0; i < pings + 1 + REWARM_PINGS; i++) {
      // the pings, the round trip after rank 0's second wait (asleepNs), the re-warming ones
      await world.recv(ball, 0, 7);
      await world.send(ball, 0, 7);
    }
  }
} else {
  throw new Error(`startup: mode hello or first, got "${mode}"`);
}
await mpi.finalize();
