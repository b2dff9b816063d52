// The `tcp rpi` and `paired` columns of `ssi-bench pingpong`: an MPI program for 2 ranks of
// @ssi/mpi (started by the benchmark with `launchJob` and `--ssi rpi tcp`). Rank 0 does
// `await send(buf, 1, 0); await recv(rbuf, 1, 0)`, rank 1 receives into its own buffer and sends
// it back; receive buffers are preallocated and reused.
//
//   pingpong-mpi.mjs <reps> <size>:<iters>...
//
// Rank 0 prints one line per size, PINGPONG {"size":S,"iters":I,"oneWayNs":[...],"cpuNs":[...]}: one
// sample per repetition (round trip / 2; cpuNs: the CPU time of both ranks per round trip), after
// an unrecorded warm-up pass of a quarter of the iterations. The lines are printed after the last
// size, not between sizes: a write to stdout (a pipe) goes through the same stream functions of
// Node as the rpi's socket writes, and the first one deoptimizes them (V8: "wrong map"), which
// made the next 2-4 passes up to 2 x slower (the "first sizes are slower" effect of earlier runs).
// Before the first size, unrecorded passes over every size of the plan (up to 1000 round trips
// each) for SSI_BENCH_WARMUP_MS warm up the process (the JIT: a size whose path, e.g. a 0-byte
// message's, was not run before ran its first passes up to 2 x slower).
//
//   pingpong-mpi.mjs paired <blocks> <block-iters> <size>...
//
// The paired mode: the two ranks also open the raw socket baseline (framed.mjs, the code of
// pingpong-raw.mjs) between themselves, over a Unix-domain socket (a Linux abstract name), the
// family the tcp rpi uses between two ranks of one node (rpi_tcp_unix), and with
// SSI_BENCH_RAW_POLL=1 both keep their event loops polling during the raw blocks (as the raw
// columns do; the rpi polls while it waits); then they warm up both (round trips of 8 bytes for SSI_BENCH_WARMUP_MS each), then per
// size alternate blocks of <block-iters> round trips over the tcp rpi and over the raw socket,
// rpi first in even blocks and raw first in odd ones. Rank 0 prints one line per size,
// PAIRED {"size":S,"blockIters":K,"rpiNs":[...],"rawNs":[...]}: one-way ns of each block, the
// i-th entries measured next to each other. Load from elsewhere on the machine then hits both
// sides of a pair alike, which separate runs of separate processes cannot give.
//
// @ssi/mpi is imported from SSI_BENCH_MPI_URL when set (the benchmark sets it: tools/bench does
// not depend on @ssi/mpi), else as the bare package name. SSI_BENCH_CPUS="A,B": rank 0 pins itself
// to CPU A, rank 1 to CPU B (taskset, every thread), before MPI.init (by SSI_RANK) or right after. SSI_BENCH_PREPOST=1:
// receives are posted before the sends they answer (see rpiRounds).
import { connectPing, keepPolling, listenEcho, pin } from './framed.mjs';

const { MPI } = await import(process.env.SSI_BENCH_MPI_URL || '@ssi/mpi');

const args = process.argv.slice(2);
const paired = args[0] === 'paired';
const plan = paired
  ? args.slice(3).map((size) => ({ size: Number(size), iters: Number(args[2]) }))
  : args.slice(1).map((p) => {
      const [size, iters] = p.split(':').map(Number);
      return { size, iters };
    });
const maxSize = Math.max(1, ...plan.map((p) => p.size));
/**
 * Round trips of every size of the plan before the first size is measured, for at least
 * SSI_BENCH_WARMUP_MS (and at least 4 passes): a fresh process runs its first passes 2-20 times
 * slower than later ones (the JIT), and a size whose path has not run yet its first ones 2 x.
 */
const WARMUP_MS = Number(process.env.SSI_BENCH_WARMUP_MS ?? 2000);
const WARMUP_PASS = 1000;

// Pinned before MPI.init when the launcher says the rank (SSI_RANK): MPI.init sees the binding
// (its progress engine polls a bound rank on a busy machine, and would otherwise notice only at
// its next check, 250 ms later, in the middle of the first sizes).
const earlyRank = process.env.SSI_RANK;
if (earlyRank !== undefined) pin(Number(earlyRank));
const mpi = await MPI.init();
const world = mpi.COMM_WORLD;
if (world.size !== 2) throw new Error(`pingpong needs exactly 2 ranks, got ${world.size}`);
const rank = world.rank;
if (earlyRank === undefined) pin(rank);
const peer = 1 - rank;
const sbuf = new Uint8Array(maxSize);
const rbuf = new Uint8Array(maxSize);
const prepost = process.env.SSI_BENCH_PREPOST === '1';
const rbuf2 = new Uint8Array(prepost ? maxSize : 0);
for (let i = 0; i < maxSize; i++) sbuf[i] = (i * 7 + 1) & 0xff;

/**
 * `n` round trips of `size` bytes over the tcp rpi; rank 0 returns the one-way time in ns. With
 * SSI_BENCH_PREPOST=1 each receive is posted before the send it answers (NetPIPE's asynchronous
 * receive mode): rank 0 posts its receive, then sends; rank 1 posts the receive for the next round
 * (into its other buffer) before it echoes.
 */
async function rpiRounds(size, n) {
  const buf = sbuf.subarray(0, size);
  const into = rbuf.subarray(0, size);
  if (rank === 0) {
    if (size > 0) rbuf[0] = rbuf[size - 1] = 0;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      if (prepost) {
        const reply = world.irecv(into, peer, 0);
        await world.send(buf, peer, 0);
        await reply.wait();
      } else {
        await world.send(buf, peer, 0);
        await world.recv(into, peer, 0);
      }
    }
    const ns = Number(process.hrtime.bigint() - t0) / n / 2;
    if (size > 0 && (rbuf[0] !== sbuf[0] || rbuf[size - 1] !== sbuf[size - 1]))
      throw new Error(`size ${size}: the echo does not match what was sent`);
    return ns;
  }
  if (prepost) {
    const bufs = [into, rbuf2.subarray(0, size)];
    let next = world.irecv(bufs[0], peer, 0);
    for (let i = 0; i < n; i++) {
      await next.wait();
      if (i + 1 < n) next = world.irecv(bufs[(i + 1) % 2], peer, 0);
      await world.send(bufs[i % 2], peer, 0);
    }
    return 0;
  }
  for (let i = 0; i < n; i++) {
    await world.recv(into, peer, 0);
    await world.send(into, peer, 0);
  }
  return 0;
}

/**
 * The CPU time (user + system) both ranks spent on a pass, per round trip in ns: rank 1 sends its
 * own to rank 0 after the pass (not timed). Unlike the wall time it hardly moves with other load
 * on the machine, so it resolves what a module adds per message (while the ranks sleep between
 * messages; a polling rank's CPU time is its wall time).
 */
async function cpuPerRoundTrip(cpuUs, n) {
  const mine = new Float64Array([cpuUs.user + cpuUs.system]);
  if (rank === 1) {
    await world.send(mine, 0, 3);
    return 0;
  }
  const theirs = new Float64Array(1);
  await world.recv(theirs, 1, 3);
  return ((mine[0] + theirs[0]) * 1000) / n;
}

/**
 * Passes of `rounds(8 B)` until rank 0 has spent WARMUP_MS on them (at least four passes); rank 0
 * tells rank 1 after each pass whether another follows, so both run the same number.
 */
function warmUpRounds(iters) {
  return Math.min(WARMUP_PASS, Math.ceil(iters / 4));
}

async function warmUp(rounds) {
  const more = new Uint8Array(1);
  const t0 = performance.now();
  for (let pass = 1; ; pass++) {
    // the timed passes' own steps, CPU-time exchange included: a call path that first meets a
    // new kind of buffer (the Float64Array of the CPU times) in a timed pass is deoptimized there,
    // and two spinning ranks on 2 CPUs leave V8's compiler little time to optimize it again
    const cpu0 = process.cpuUsage();
    for (const { size, iters } of plan) await rounds(size, warmUpRounds(iters));
    await cpuPerRoundTrip(process.cpuUsage(cpu0), WARMUP_PASS);
    if (rank === 0) {
      more[0] = pass < 4 || performance.now() - t0 < WARMUP_MS ? 1 : 0;
      await world.send(more, 1, 4);
    } else await world.recv(more, 0, 4);
    if (more[0] === 0) return;
  }
}

/** What rank 0 prints at the end (see the header: nothing is printed while measuring). */
const results = [];

async function timedPasses() {
  await warmUp(rpiRounds);
  const nreps = Number(args[0]);
  for (const { size, iters } of plan) {
    const oneWayNs = [];
    const cpuNs = [];
    for (let r = 0; r <= nreps; r++) {
      const n = r === 0 ? Math.ceil(iters / 4) : iters; // r = 0: warm-up
      const cpu0 = process.cpuUsage();
      const ns = await rpiRounds(size, n);
      const cpu = await cpuPerRoundTrip(process.cpuUsage(cpu0), n);
      if (r > 0) {
        oneWayNs.push(ns);
        cpuNs.push(cpu);
      }
    }
    if (rank === 0) results.push(`PINGPONG ${JSON.stringify({ size, iters, oneWayNs, cpuNs })}`);
  }
}

/** Rank 1 echoes on the raw socket meanwhile: it waits in an MPI receive for rank 0's go-ahead. */
async function pairedBlocks() {
  const blocks = Number(args[1]);
  const token = new Uint8Array(4);
  let raw = null;
  // the echo side's abstract Unix socket name, told by its pid
  const where = (pid) => `\0ssi-bench-paired-${pid}`;
  if (rank === 1) {
    await listenEcho(maxSize, where(process.pid));
    await world.send(new Int32Array([process.pid]), 0, 1);
  } else {
    const pid = new Int32Array(1);
    await world.recv(pid, 1, 1);
    raw = await connectPing(where(pid[0]), maxSize);
  }
  /** `n` round trips over the raw socket (rank 0 drives them); the one-way time in ns. */
  const rawRounds = async (size, n) => {
    if (rank === 1) {
      const stop = keepPolling();
      await world.recv(token, 0, 2);
      stop();
      return 0;
    }
    const buf = sbuf.subarray(0, size);
    const body = raw.framed.body;
    if (size > 0) body[0] = body[size - 1] = 0;
    const stop = keepPolling();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await raw.round(buf);
    const ns = Number(process.hrtime.bigint() - t0) / n / 2;
    stop();
    if (size > 0 && (body[0] !== sbuf[0] || body[size - 1] !== sbuf[size - 1]))
      throw new Error(`size ${size}: the raw echo does not match what was sent`);
    await world.send(token, 1, 2);
    return ns;
  };
  await warmUp(rpiRounds);
  await warmUp(rawRounds);
  for (const { size, iters } of plan) {
    const rpiNs = [];
    const rawNs = [];
    for (let b = 0; b < blocks; b++) {
      if (b % 2 === 0) {
        rpiNs.push(await rpiRounds(size, iters));
        rawNs.push(await rawRounds(size, iters));
      } else {
        rawNs.push(await rawRounds(size, iters));
        rpiNs.push(await rpiRounds(size, iters));
      }
    }
    if (rank === 0)
      results.push(`PAIRED ${JSON.stringify({ size, blockIters: iters, rpiNs, rawNs })}`);
  }
  raw?.close();
}

if (paired) await pairedBlocks();
else await timedPasses();
for (const line of results) console.log(line);
await mpi.finalize();
