// The TypeScript twin of programs/startup.mjs (the same statements with types): `ssi-bench
// startup` runs both to measure what a .ts entry point costs at start-up. Modes and output lines
// as in startup.mjs.
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';

interface StartupLine {
  rank: number;
  size: number;
  sum: number;
  rssKiB: number;
}

const { MPI, SUM } = await import(process.env.SSI_BENCH_MPI_URL || '@ssi/mpi');
const [mode = 'hello', pingsArg = '50'] = process.argv.slice(2);

const mpi = await MPI.init();
const world = mpi.COMM_WORLD;
const rank: number = world.rank;
const size: number = world.size;

/** Nanoseconds of one TCP connect + accept on loopback (a server of this process). */
async function tcpConnectNs(): Promise<number> {
  const server = createServer(() => {});
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const accepted = new Promise<Socket>((ok) => server.once('connection', (s: Socket) => ok(s)));
  const t0 = process.hrtime.bigint();
  const sock = connect((server.address() as AddressInfo).port, '127.0.0.1');
  await new Promise<void>((ok) => sock.once('connect', ok));
  const peer = await accepted;
  const ns = Number(process.hrtime.bigint() - t0);
  sock.destroy();
  peer.destroy();
  await new Promise<void>((ok) => server.close(() => ok()));
  return ns;
}

if (mode === 'hello') {
  const sum: number = (await world.allreduce(new Float64Array([rank]), SUM))[0];
  if (sum !== (size * (size - 1)) / 2) throw new Error(`rank ${rank}: allreduce gave ${sum}`);
  const line: StartupLine = {
    rank,
    size,
    sum,
    rssKiB: Math.round(process.memoryUsage().rss / 1024),
  };
  console.log(`STARTUP ${JSON.stringify(line)}`);
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
    const openNs: number[] = [];
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
