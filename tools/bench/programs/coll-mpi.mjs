// The `ssi` column of `ssi-bench coll`: collectives of @ssi/mpi on N ranks (started by the
// benchmark with `launchJob`, `--ssi rpi tcp --ssi coll <module>`). The same loop as c/coll.c.
//
//   coll-mpi.mjs <reps> <op>:<bytes>:<iters>:<warmup>[:<warmup ms>]...
//
// op is barrier (bytes 0), bcast (`bytes` from rank 0), allreduce, reduce to rank 0 and scan
// (`bytes` of float32, SUM), reducescatter (`bytes` of float32 per rank, SUM),
// alltoall (`bytes` per pair), allgather (`bytes` per rank) or sendrecv (`bytes` to rank + 1 from
// rank - 1: point-to-point, the exchange alltoall makes on 2 ranks). For each point every rank runs an unrecorded warm-up pass of
// `warmup` calls (the JIT of a fresh Node process needs thousands of calls to settle), lasting at
// least `warmup ms` (the optional fifth field; rank 0 decides after each block of 500), then per
// repetition: a barrier (not timed), `iters` calls back to back, timed on each rank. Rank 0 gathers the per-rank times (not timed) and prints one line
// per point,
//   COLL {"op":O,"bytes":B,"np":N,"iters":I,"maxNs":[...],"avgNs":[...],"minNs":[...]}
// with, per repetition, the largest, mean and smallest per-rank time per call (IMB's t_max,
// t_avg, t_min), all lines after the last point (a write to stdout between points slowed the
// passes after it: see the end of this file). Results are checked after every pass (first and
// last element of each block).
//
// @ssi/mpi is imported from SSI_BENCH_MPI_URL when set (the benchmark sets it: tools/bench does
// not depend on @ssi/mpi), else as the bare package name.

const { MPI, SUM } = await import(process.env.SSI_BENCH_MPI_URL || '@ssi/mpi');

const [reps, ...pairs] = process.argv.slice(2);
const nreps = Number(reps);
const plan = pairs.map((p) => {
  const [op, bytes, iters, warmup, warmupMs = '0'] = p.split(':');
  return {
    op,
    bytes: Number(bytes),
    iters: Number(iters),
    warmup: Number(warmup),
    warmupMs: Number(warmupMs),
  };
});

const mpi = await MPI.init();
const world = mpi.COMM_WORLD;
const rank = world.rank;
const np = world.size;

function fail(message) {
  throw new Error(`coll (rank ${rank}): ${message}`);
}

/** Byte i of the broadcast data. */
const pattern = (i) => (i * 7 + 1) & 0xff;
/** Every byte of the alltoall block rank `from` sends to rank `to`. */
const blockByte = (from, to) => (from * 16 + to + 1) & 0xff;
/** Element i of rank r's allreduce operand (exact in float32, and so is the sum). */
const operand = (r, i) => r + 1 + (i % 4);
const sumOf = (i) => (np * (np + 1)) / 2 + np * (i % 4);

/** One point: `run()` is one call; `reset()` clears what the check reads; `check()` after. */
function setup({ op, bytes }) {
  if (op === 'barrier') return { run: () => world.barrier(), reset() {}, check() {} };
  if (op === 'bcast') {
    const buf = new Uint8Array(bytes);
    if (rank === 0) for (let i = 0; i < bytes; i++) buf[i] = pattern(i);
    const last = bytes - 1;
    return {
      run: () => world.bcast(buf, 0),
      reset() {
        if (rank !== 0 && bytes > 0) buf[0] = buf[last] = 0;
      },
      check() {
        if (bytes > 0 && (buf[0] !== pattern(0) || buf[last] !== pattern(last)))
          fail(`bcast of ${bytes} bytes: wrong data`);
      },
    };
  }
  if (op === 'allreduce') {
    const n = bytes / 4;
    if (!Number.isInteger(n)) fail(`allreduce: ${bytes} bytes is not a whole number of float32`);
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = operand(rank, i);
    const into = new Float32Array(n);
    const last = n - 1;
    return {
      run: () => world.allreduce(data, SUM, into),
      reset() {
        if (n > 0) into[0] = into[last] = 0;
      },
      check() {
        if (n > 0 && (into[0] !== sumOf(0) || into[last] !== sumOf(last)))
          fail(`allreduce of ${n} float32: got ${into[0]}, ${into[last]}`);
      },
    };
  }
  if (op === 'reduce') {
    const n = bytes / 4;
    if (!Number.isInteger(n)) fail(`reduce: ${bytes} bytes is not a whole number of float32`);
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = operand(rank, i);
    const into = new Float32Array(n);
    const last = n - 1;
    return {
      run: () => world.reduce(data, SUM, 0, rank === 0 ? into : undefined),
      reset() {
        if (n > 0) into[0] = into[last] = 0;
      },
      check() {
        if (rank === 0 && n > 0 && (into[0] !== sumOf(0) || into[last] !== sumOf(last)))
          fail(`reduce of ${n} float32: got ${into[0]}, ${into[last]}`);
      },
    };
  }
  if (op === 'reducescatter') {
    // `bytes` of float32 per rank: the vector is np blocks, block r to rank r.
    const n = bytes / 4;
    if (!Number.isInteger(n))
      fail(`reducescatter: ${bytes} bytes is not a whole number of float32`);
    const data = new Float32Array(n * np);
    for (let i = 0; i < n * np; i++) data[i] = operand(rank, i);
    const counts = Array(np).fill(n);
    const into = new Float32Array(n);
    const last = n - 1;
    const at = rank * n;
    return {
      run: () => world.reduceScatter(data, counts, SUM, into),
      reset() {
        if (n > 0) into[0] = into[last] = 0;
      },
      check() {
        if (n > 0 && (into[0] !== sumOf(at) || into[last] !== sumOf(at + last)))
          fail(`reducescatter of ${n} float32 per rank: got ${into[0]}, ${into[last]}`);
      },
    };
  }
  if (op === 'scan') {
    const n = bytes / 4;
    if (!Number.isInteger(n)) fail(`scan: ${bytes} bytes is not a whole number of float32`);
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = operand(rank, i);
    const into = new Float32Array(n);
    const last = n - 1;
    // Ranks 0..rank: sum of (r + 1 + i % 4).
    const prefixOf = (i) => ((rank + 1) * (rank + 2)) / 2 + (rank + 1) * (i % 4);
    return {
      run: () => world.scan(data, SUM, into),
      reset() {
        if (n > 0) into[0] = into[last] = 0;
      },
      check() {
        if (n > 0 && (into[0] !== prefixOf(0) || into[last] !== prefixOf(last)))
          fail(`scan of ${n} float32: got ${into[0]}, ${into[last]}`);
      },
    };
  }
  if (op === 'alltoall') {
    const send = new Uint8Array(bytes * np);
    for (let to = 0; to < np; to++) send.fill(blockByte(rank, to), to * bytes, (to + 1) * bytes);
    const into = new Uint8Array(bytes * np);
    return {
      run: () => world.alltoall(send, into),
      reset() {
        if (bytes > 0) for (let r = 0; r < np; r++) into[r * bytes] = into[(r + 1) * bytes - 1] = 0;
      },
      check() {
        if (bytes === 0) return;
        for (let r = 0; r < np; r++) {
          const want = blockByte(r, rank);
          if (into[r * bytes] !== want || into[(r + 1) * bytes - 1] !== want)
            fail(`alltoall of ${bytes} bytes per pair: wrong block from rank ${r}`);
        }
      },
    };
  }
  if (op === 'allgather') {
    const send = new Uint8Array(bytes).fill(blockByte(rank, rank));
    const into = new Uint8Array(bytes * np);
    return {
      run: () => world.allgather(send, into),
      reset() {
        if (bytes > 0) for (let r = 0; r < np; r++) into[r * bytes] = into[(r + 1) * bytes - 1] = 0;
      },
      check() {
        if (bytes === 0) return;
        for (let r = 0; r < np; r++) {
          const want = blockByte(r, r);
          if (into[r * bytes] !== want || into[(r + 1) * bytes - 1] !== want)
            fail(`allgather of ${bytes} bytes per rank: wrong block from rank ${r}`);
        }
      },
    };
  }
  if (op === 'sendrecv') {
    // A ring shift: `bytes` to rank + 1 while `bytes` come from rank - 1 (on 2 ranks the
    // exchange alltoall makes), point-to-point only.
    const right = (rank + 1) % np;
    const left = (rank - 1 + np) % np;
    const send = new Uint8Array(bytes).fill(blockByte(rank, right));
    const into = new Uint8Array(bytes);
    const last = bytes - 1;
    return {
      run: () => world.sendrecv(send, right, 7, into, left, 7),
      reset() {
        if (bytes > 0) into[0] = into[last] = 0;
      },
      check() {
        const want = blockByte(left, rank);
        if (bytes > 0 && (into[0] !== want || into[last] !== want))
          fail(`sendrecv of ${bytes} bytes: wrong data from rank ${left}`);
      },
    };
  }
  return fail(`unknown operation "${op}"`);
}

/** Rank 0's "go on" to every rank after each block of the timed warm-up. */
const goOn = new Uint8Array(1);

/**
 * More warm-up calls, in blocks of 500, until `ms` have passed since `t0` on rank 0 (V8 optimizes
 * after time as well as calls: on a loaded machine the calls alone leave the first timed passes
 * of a latency operation unoptimized). Rank 0 decides for all, so every rank makes the same calls.
 */
async function warmFor(p, ms, t0) {
  if (!(ms > 0)) return;
  for (;;) {
    goOn[0] = rank === 0 && Number(process.hrtime.bigint() - t0) / 1e6 < ms ? 1 : 0;
    await world.bcast(goOn, 0);
    if (goOn[0] === 0) return;
    for (let i = 0; i < 500; i++) await p.run();
  }
}

/**
 * Calls of the rehearsal: a short pass before the warm-up that makes every call of a pass (the
 * operation, warmFor's bcast of one byte, the gather of the times), so the JIT has seen them all
 * when the warm-up optimizes the operation. Without it the warm-up's code was compiled for the
 * operation's messages alone (a barrier's are 0 bytes); the driver's bcast and gather after it
 * deoptimized functions they share (the tcp rpi's writes and reads, the collective entry) just
 * before the first timed pass, which then ran partly unoptimized: a 2-rank barrier measured
 * 12-20 us as the first point of a run and 7 us as the second.
 */
const rehearsalCalls = (warmup) => Math.min(warmup, 200);

/**
 * `n` calls back to back, in a function of their own: resumed after every call, the loop in the
 * module's top level made that whole body hot, and V8 compiled it (30-35 ms on the rank's one
 * bound CPU, shared with its compiler thread) during the first point's passes.
 */
async function calls(p, n) {
  for (let i = 0; i < n; i++) await p.run();
}

/** The result lines, printed together at the end. */
const lines = [];
for (const point of plan) {
  const { op, bytes, iters, warmup } = point;
  const p = setup(point);
  const maxNs = [];
  const avgNs = [];
  const minNs = [];
  // r = -1: the rehearsal, r = 0: the warm-up pass, then the timed passes.
  for (let r = -1; r <= nreps; r++) {
    const n = r === -1 ? rehearsalCalls(warmup) : r === 0 ? warmup : iters;
    p.reset();
    await world.barrier();
    const t0 = process.hrtime.bigint();
    await calls(p, n);
    const ns = Number(process.hrtime.bigint() - t0) / Math.max(1, n);
    if (r === -1) await world.bcast(goOn, 0); // the call warmFor makes
    if (r === 0) await warmFor(p, point.warmupMs, t0);
    if (n > 0) p.check();
    const all = await world.gather(new Float64Array([ns]), 0);
    if (r > 0 && rank === 0) {
      maxNs.push(Math.max(...all));
      minNs.push(Math.min(...all));
      avgNs.push(all.reduce((a, b) => a + b, 0) / np);
    }
  }
  if (rank === 0)
    lines.push(`COLL ${JSON.stringify({ op, bytes, np, iters, maxNs, avgNs, minNs })}`);
}
// After the last point, not between points: the first write to stdout (a pipe) deoptimizes the
// stream functions of Node that the rpi's socket writes share, which slowed the next passes (the
// pingpong driver's finding, see the bench README).
if (rank === 0) console.log(lines.join('\n'));
await mpi.finalize();
