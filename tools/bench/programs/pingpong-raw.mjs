// The `raw socket` column of `ssi-bench pingpong`: the same ping-pong as pingpong-mpi.mjs, over
// one plain Node TCP socket on 127.0.0.1 (Nagle off) with the tcp rpi's framing: a 32-byte
// envelope (body length in its first 4 bytes, little endian) then the body. Reads use the tcp
// rpi's technique (`onread`): envelopes and short bodies land in a 256 KiB staging buffer (only
// its first 4 KiB after a read that did not fill it, so that the head of a long body after a
// pause is all that is copied) and are copied into the preallocated receive buffer; a body with
// >= 16 KiB left is read by the kernel straight into it. Writes too: envelope + body copied into one buffer up to 16 KiB,
// above that envelope and body go out in one writev (cork/uncork) without a copy. The
// connection itself is framed.mjs (shared with the paired mode of pingpong-mpi.mjs).
//
//   node pingpong-raw.mjs echo <max-size> [<unix-path>]      prints "PORT <n|path>", echoes until closed
//   node pingpong-raw.mjs ping <port|path> <reps> <size>:<iters>...  one PINGPONG line per size
// With <unix-path> (the `raw-unix` column) the same loop runs over a Unix-domain socket at that
// path instead of TCP: the only difference between the two columns is the socket family.
//
// PINGPONG {"size":S,"iters":I,"oneWayNs":[...]}: one sample per repetition (round trip / 2),
// after an unrecorded warm-up pass of a quarter of the iterations: what every driver prints,
// printed after the last size (a write to stdout between sizes deoptimizes Node's stream write
// path, which the socket's writes share; see pingpong-mpi.mjs). Before the first size,
// unrecorded passes over every size of the plan (up to 1000 round trips each) warm up the
// process (the JIT), for at least SSI_BENCH_WARMUP_MS (default 2000) and at least 4 passes, as
// in pingpong-mpi.mjs.
// SSI_BENCH_RAW_POLL=1: both sides keep the event loop polling (keepPolling of framed.mjs).
// SSI_BENCH_CPUS="A,B": the ping side pins itself to CPU A, the echo side to CPU B (taskset).
import { connectPing, keepPolling, listenEcho, pin } from './framed.mjs';

async function echo(maxSize, unixPath) {
  const { port, closed } = await listenEcho(maxSize, unixPath);
  console.log(`PORT ${port}`);
  const stop = keepPolling();
  await closed;
  console.log(`POLLED ${stop()}`); // immediates run while echoing (the tests check it polled)
  process.exit(0);
}

async function ping(port, reps, plan) {
  const maxSize = Math.max(1, ...plan.map((p) => p.size));
  const { framed, round, close } = await connectPing(port, maxSize);
  const stop = keepPolling();
  const sbuf = new Uint8Array(maxSize);
  for (let i = 0; i < maxSize; i++) sbuf[i] = (i * 7 + 1) & 0xff;
  const warmupMs = Number(process.env.SSI_BENCH_WARMUP_MS ?? 2000);
  const t0 = performance.now();
  for (let pass = 1; pass <= 4 || performance.now() - t0 < warmupMs; pass++) {
    for (const { size, iters } of plan) {
      const n = Math.min(1000, Math.ceil(iters / 4));
      for (let i = 0; i < n; i++) await round(sbuf.subarray(0, size));
    }
  }
  const results = [];
  for (const { size, iters } of plan) {
    const buf = sbuf.subarray(0, size);
    const oneWayNs = [];
    for (let r = 0; r <= reps; r++) {
      const n = r === 0 ? Math.ceil(iters / 4) : iters; // r = 0: the warm-up pass
      if (size > 0) framed.body[0] = framed.body[size - 1] = 0;
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) await round(buf);
      const ns = Number(process.hrtime.bigint() - t0) / n / 2;
      if (size > 0 && (framed.body[0] !== sbuf[0] || framed.body[size - 1] !== sbuf[size - 1]))
        throw new Error(`size ${size}: the echo does not match what was sent`);
      if (r > 0) oneWayNs.push(ns);
    }
    results.push(`PINGPONG ${JSON.stringify({ size, iters, oneWayNs })}`);
  }
  for (const line of results) console.log(line);
  stop();
  close();
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === 'echo') {
  pin(1);
  await echo(Number(rest[0]), rest[1]);
} else if (mode === 'ping') {
  const [port, reps, ...pairs] = rest;
  const plan = pairs.map((p) => {
    const [size, iters] = p.split(':').map(Number);
    return { size, iters };
  });
  pin(0);
  await ping(port, Number(reps), plan);
} else {
  console.error(
    'usage: pingpong-raw.mjs echo <max-size> [<unix-path>] | ping <port|path> <reps> <size>:<iters>...',
  );
  process.exit(2);
}
