import { type ChildProcess, spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ShmEndpoint, ShmSegment } from '@ssi/shm';
import {
  type BenchCommand,
  formatSize,
  formatTable,
  nowNs,
  Options,
  repeat,
  type Stat,
  writeResults,
} from '../harness';

const USAGE = `usage: node tools/bench/dist/cli.js shm [options]

Cross-process ping-pong through @ssi/shm (spin mode = usysv, blocking mode = sysv), side by side
with two baselines measured the same way in the same run: a worker-thread SharedArrayBuffer
ping-pong (spinning on Atomics) and a TCP ping-pong over 127.0.0.1 (a child process echoing).
One-way time = round trip / 2 (median over repetitions); bandwidth = size / one-way time.

options:
  --reps N            repetitions per point (default 5; the median is reported)
  --lat-sizes LIST    latency sizes (default 8,1k)
  --bw-sizes LIST     bandwidth sizes (default 64k,256k,1m,4m,16m)
  --spin-us N         spin time of the spin mode, microseconds (default 100)
  --helper-spin-us N  the "block+hs" column: blocking mode whose helper thread spins this long
                      before FUTEX_WAIT (default 50; the plain "block" column uses 0)
  --chunk SIZE        pool chunk size (default 256k)
  --pool SIZE         pool size (default 16m)
  --only LIST         run only some of: spin,block,blockhs,sab,tcp (default all)
  --no-buffer-choice  skip the ArrayBuffer-vs-SharedArrayBuffer comparison
  --quick             fewer iterations (a smoke run; numbers are noisier)`;

interface EndToEnd {
  size: number;
  ab?: Stat;
  sab?: Stat;
}

interface Row {
  size: number;
  kind: 'latency' | 'bandwidth';
  spin?: Stat;
  block?: Stat;
  blockhs?: Stat;
  sab?: Stat;
  tcp?: Stat;
}

/** A ping-pong: `round(size)` does one round trip; returns nothing. */
interface PingPong {
  round(buf: Uint8Array, rbuf: Uint8Array): Promise<void> | void;
  close(): Promise<void>;
}

const cliPath = () => fileURLToPath(new URL('./cli.js', import.meta.url));

function spawnPeer(kind: string, arg: unknown): ChildProcess {
  return spawn(process.execPath, [cliPath(), '__peer', kind, JSON.stringify(arg)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
}

function line(child: ChildProcess, prefix: string, timeoutMs = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const t = setTimeout(
      () => reject(new Error(`peer did not print "${prefix}" within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onData = (d: Buffer) => {
      buf += d.toString();
      const l = buf.split('\n').find((x) => x.startsWith(prefix));
      if (l !== undefined) {
        clearTimeout(t);
        child.stdout!.off('data', onData);
        resolve(l.slice(prefix.length).trim());
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`peer exited (${code}) before "${prefix}"`)));
  });
}

let jobCounter = 0;

async function shmPingPong(
  mode: 'spin' | 'block' | 'blockhs',
  o: {
    spinUs: number;
    helperSpinUs: number;
    chunk: number;
    pool: number;
    maxSize: number;
    buffer: 'ab' | 'sab';
  },
): Promise<PingPong> {
  const job = `bench-${process.pid}-${jobCounter++}`;
  const seg = ShmSegment.create({
    name: `/ssi-bench-${job}`,
    job,
    nprocs: 2,
    lock: mode === 'spin' ? 'spin' : 'block',
    poolSize: o.pool,
    buffer: o.buffer,
  });
  const spinUs = mode === 'spin' ? o.spinUs : 0;
  const helperSpinUs = mode === 'blockhs' ? o.helperSpinUs : 0;
  const child = spawnPeer('shm', {
    name: seg.name,
    job,
    spinUs,
    helperSpinUs,
    chunkSize: o.chunk,
    maxSize: o.maxSize,
    buffer: o.buffer,
  });
  await line(child, 'READY');
  const ep = new ShmEndpoint(seg, { spinUs, helperSpinUs, chunkSize: o.chunk });
  return {
    async round(buf, rbuf) {
      await ep.send(1, buf);
      await ep.recv(1, { into: rbuf });
    },
    async close() {
      await ep.send(1, new Uint8Array(1));
      await ep.recv(1, { timeoutMs: 10_000 });
      ep.close();
      seg.close();
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
    },
  };
}

async function tcpPingPong(): Promise<PingPong> {
  const child = spawnPeer('tcp', {});
  const port = Number(await line(child, 'PORT'));
  const sock: Socket = await new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
  sock.setNoDelay(true);
  let want = 0;
  let got = 0;
  let done: (() => void) | null = null;
  let target: Uint8Array | null = null;
  sock.on('data', (d: Buffer) => {
    if (target && got + d.length <= target.length) target.set(d, got);
    got += d.length;
    if (got >= want && done) {
      const f = done;
      done = null;
      f();
    }
  });
  return {
    round(buf, rbuf) {
      want = buf.length;
      got = 0;
      target = rbuf;
      return new Promise<void>((resolve) => {
        done = resolve;
        sock.write(buf);
      });
    },
    async close() {
      sock.destroy();
      child.stdin!.end();
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
    },
  };
}

const SAB_WORKER = `
const { workerData } = require('node:worker_threads');
const ctrl = new Int32Array(workerData.sab, 0, 16);
const data = new Uint8Array(workerData.sab, 64);
const priv = new Uint8Array(workerData.maxSize);
let seen = 0;
for (;;) {
  let v;
  while ((v = Atomics.load(ctrl, 0)) === seen) {}
  seen = v;
  const n = Atomics.load(ctrl, 2);
  if (n < 0) break;
  priv.set(data.subarray(0, n));
  data.set(priv.subarray(0, n));
  Atomics.add(ctrl, 1, 1);
}`;

/** The baseline: a worker thread echoing through a SharedArrayBuffer, both sides spinning. */
async function sabPingPong(maxSize: number): Promise<PingPong> {
  const sab = new SharedArrayBuffer(64 + maxSize);
  const ctrl = new Int32Array(sab, 0, 16);
  const data = new Uint8Array(sab, 64);
  const worker = new Worker(SAB_WORKER, { eval: true, workerData: { sab, maxSize } });
  await new Promise((r) => setTimeout(r, 100)); // let it start spinning
  return {
    round(buf, rbuf) {
      data.set(buf);
      Atomics.store(ctrl, 2, buf.length);
      const before = Atomics.load(ctrl, 1);
      Atomics.add(ctrl, 0, 1);
      while (Atomics.load(ctrl, 1) === before) {}
      rbuf.set(data.subarray(0, buf.length));
    },
    async close() {
      Atomics.store(ctrl, 2, -1);
      Atomics.add(ctrl, 0, 1);
      await worker.terminate();
    },
  };
}

/** Median one-way time (ns) of `iters` round trips of `size` bytes, over `reps` repetitions. */
async function measure(pp: PingPong, size: number, iters: number, reps: number): Promise<Stat> {
  const buf = new Uint8Array(size).fill(0x5a);
  const rbuf = new Uint8Array(size);
  return repeat(reps, async () => {
    const t0 = nowNs();
    for (let i = 0; i < iters; i++) await pp.round(buf, rbuf);
    return (nowNs() - t0) / iters / 2;
  });
}

function iterations(kind: string, size: number, latency: boolean, quick: boolean): number {
  const q = quick ? 0.1 : 1;
  if (latency) {
    const base = kind === 'spin' || kind === 'sab' ? 20_000 : 2_000;
    return Math.max(50, Math.round(base * q));
  }
  return Math.max(4, Math.round(((256 * 1024 * 1024) / size) * q * (kind === 'tcp' ? 0.25 : 1)));
}

/** In-process: copy and Atomics cost on an external ArrayBuffer vs a SharedArrayBuffer segment. */
function bufferChoice(reps: number) {
  const out: Record<string, Record<string, number>> = {};
  for (const kind of ['ab', 'sab'] as const) {
    const job = `bench-buf-${process.pid}-${kind}`;
    const seg = ShmSegment.create({
      name: `/ssi-${job}`,
      job,
      nprocs: 2,
      poolSize: 4 << 20,
      buffer: kind,
    });
    const res: Record<string, number> = {};
    const i32 = new Int32Array(seg.buffer, 0, 1024);
    const time = (n: number, f: () => void) => {
      const s: number[] = [];
      for (let r = 0; r < reps + 1; r++) {
        const t = nowNs();
        for (let i = 0; i < n; i++) f();
        s.push((nowNs() - t) / n);
      }
      s.shift();
      return s.sort((a, b) => a - b)[s.length >> 1]!;
    };
    let x = 0;
    res['atomics store+load ns'] = time(2_000_000, () => {
      Atomics.store(i32, 600, x);
      x += Atomics.load(i32, 700);
    });
    res['atomics add ns'] = time(2_000_000, () => {
      Atomics.add(i32, 600, 1);
    });
    for (const size of [1024, 64 * 1024, 1024 * 1024]) {
      const src = new Uint8Array(size).fill(1);
      const dst = new Uint8Array(size);
      const view = new Uint8Array(seg.buffer, seg.layout.poolOffset, size);
      const n = Math.max(50, Math.round((256 * 1024 * 1024) / size / 4));
      res[`copy in ${formatSize(size)} GB/s`] = size / time(n, () => view.set(src));
      res[`copy out ${formatSize(size)} GB/s`] = size / time(n, () => dst.set(view));
    }
    seg.close();
    out[kind] = res;
  }
  return out;
}

export const shmCommand: BenchCommand = {
  name: 'shm',
  summary: '@ssi/shm ping-pong (spin, blocking) vs worker SharedArrayBuffer and TCP 127.0.0.1',
  usage: USAGE,
  async run(args) {
    const o = new Options(args);
    const bad = o.unknown([
      'reps',
      'lat-sizes',
      'bw-sizes',
      'spin-us',
      'helper-spin-us',
      'chunk',
      'pool',
      'only',
      'no-buffer-choice',
      'quick',
    ]);
    if (bad.length > 0) throw new Error(`unknown option --${bad[0]}\n\n${USAGE}`);
    const reps = o.number('reps', 5);
    const quick = o.has('quick');
    const latSizes = o.sizes('lat-sizes', [8, 1024]);
    const bwSizes = o.sizes('bw-sizes', [
      64 * 1024,
      256 * 1024,
      1024 ** 2,
      4 * 1024 ** 2,
      16 * 1024 ** 2,
    ]);
    const only = o.string('only', 'spin,block,blockhs,sab,tcp').split(',');
    const params = {
      spinUs: o.number('spin-us', 100),
      helperSpinUs: o.number('helper-spin-us', 50),
      chunk: o.number('chunk', 256 * 1024),
      pool: o.number('pool', 16 * 1024 ** 2),
      maxSize: Math.max(...latSizes, ...bwSizes),
      buffer: 'ab' as 'ab' | 'sab',
    };
    const rows: Row[] = [
      ...latSizes.map((size) => ({ size, kind: 'latency' as const })),
      ...bwSizes.map((size) => ({ size, kind: 'bandwidth' as const })),
    ];
    const makers: Record<string, () => Promise<PingPong>> = {
      spin: () => shmPingPong('spin', params),
      block: () => shmPingPong('block', params),
      blockhs: () => shmPingPong('blockhs', params),
      sab: () => sabPingPong(params.maxSize),
      tcp: () => tcpPingPong(),
    };
    for (const kind of ['spin', 'block', 'blockhs', 'sab', 'tcp'] as const) {
      if (!only.includes(kind)) continue;
      process.stderr.write(`measuring ${kind} ...`);
      const pp = await makers[kind]!();
      for (const r of rows) {
        r[kind] = await measure(
          pp,
          r.size,
          iterations(kind, r.size, r.kind === 'latency', quick),
          reps,
        );
      }
      await pp.close();
      process.stderr.write(' done\n');
    }

    const us = (s?: Stat) => (s ? s.median / 1000 : null);
    const gbs = (size: number, s?: Stat) => (s ? size / s.median : null);
    const ratio = (a?: Stat, b?: Stat) => (a && b ? a.median / b.median : null);
    const lat = rows.filter((r) => r.kind === 'latency');
    const bw = rows.filter((r) => r.kind === 'bandwidth');
    console.log('\nOne-way latency, microseconds (median of', reps, 'repetitions)\n');
    console.log(
      formatTable(
        [
          { title: 'size', value: (r: Row) => formatSize(r.size) },
          { title: 'shm spin', value: (r) => us(r.spin), digits: 3 },
          { title: 'shm block', value: (r) => us(r.block) },
          { title: 'block+hs', value: (r) => us(r.blockhs) },
          { title: 'worker SAB', value: (r) => us(r.sab), digits: 3 },
          { title: 'TCP', value: (r) => us(r.tcp) },
          { title: 'spin/SAB', value: (r) => ratio(r.spin, r.sab) },
          { title: 'spin/TCP', value: (r) => ratio(r.spin, r.tcp), digits: 3 },
          { title: 'block/TCP', value: (r) => ratio(r.block, r.tcp) },
          { title: 'block+hs/TCP', value: (r) => ratio(r.blockhs, r.tcp) },
        ],
        lat,
      ),
    );
    console.log('\nBandwidth, GB/s (size / one-way time, median)\n');
    console.log(
      formatTable(
        [
          { title: 'size', value: (r: Row) => formatSize(r.size) },
          { title: 'shm spin', value: (r) => gbs(r.size, r.spin) },
          { title: 'shm block', value: (r) => gbs(r.size, r.block) },
          { title: 'block+hs', value: (r) => gbs(r.size, r.blockhs) },
          { title: 'worker SAB', value: (r) => gbs(r.size, r.sab) },
          { title: 'TCP', value: (r) => gbs(r.size, r.tcp) },
          { title: 'spin/SAB', value: (r) => ratio(r.sab, r.spin) },
          { title: 'spin/TCP', value: (r) => ratio(r.tcp, r.spin) },
          { title: 'block/TCP', value: (r) => ratio(r.tcp, r.block) },
        ],
        bw,
      ),
    );

    // Targets, checked against this run only.
    const at = (size: number) => rows.find((r) => r.size === size);
    const targets: { target: string; measured: string; met: boolean | null }[] = [];
    const r8 = at(8);
    const r1m = at(1024 ** 2);
    if (r8?.spin)
      targets.push({
        target: 'spin one-way at 8 B <= 1 us',
        measured: `${us(r8.spin)!.toFixed(3)} us`,
        met: r8.spin.median <= 1000,
      });
    if (r1m?.spin) {
      const g = gbs(r1m.size, r1m.spin)!;
      targets.push({
        target: 'spin bandwidth at 1 MiB >= 10 GB/s',
        measured: `${g.toFixed(2)} GB/s`,
        met: g >= 10,
      });
    }
    if (r8?.block && r8.tcp) {
      const x = ratio(r8.block, r8.tcp)!;
      targets.push({
        target: 'blocking one-way at 8 B <= 1.2 x TCP',
        measured: `${x.toFixed(2)} x TCP`,
        met: x <= 1.2,
      });
    }
    if (r8?.blockhs && r8.tcp) {
      const x = ratio(r8.blockhs, r8.tcp)!;
      targets.push({
        target: `(same, helper spin ${params.helperSpinUs} us)`,
        measured: `${x.toFixed(2)} x TCP`,
        met: x <= 1.2,
      });
    }
    if (targets.length > 0) {
      console.log('\nTargets\n');
      console.log(
        formatTable(
          [
            { title: 'target', value: (t: (typeof targets)[number]) => t.target },
            { title: 'measured', value: (t) => t.measured },
            { title: 'met', value: (t) => (t.met === null ? '-' : t.met ? 'yes' : 'NO') },
          ],
          targets,
        ),
      );
    }

    let choice: ReturnType<typeof bufferChoice> | undefined;
    let sabEndToEnd: EndToEnd[] | undefined;
    if (!o.has('no-buffer-choice')) {
      process.stderr.write('measuring the buffer choice ...');
      choice = bufferChoice(reps);
      // end to end: the spin ping-pong with both processes on a SharedArrayBuffer mapping
      const sabPP = await shmPingPong('spin', { ...params, buffer: 'sab' });
      sabEndToEnd = [];
      for (const size of [8, 1024 ** 2]) {
        const ab = rows.find((r) => r.size === size)?.spin;
        sabEndToEnd.push({
          size,
          ab,
          sab: await measure(sabPP, size, iterations('spin', size, size < 65536, quick), reps),
        });
      }
      await sabPP.close();
      process.stderr.write(' done\n');
      console.log(
        '\nBuffer choice: the segment as an external ArrayBuffer (ab) or a SharedArrayBuffer (sab)\n',
      );
      const keys = Object.keys(choice.ab!);
      console.log(
        formatTable(
          [
            { title: 'in-process measure', value: (k: string) => k },
            { title: 'ab', value: (k) => choice!.ab![k] },
            { title: 'sab', value: (k) => choice!.sab![k] },
          ],
          keys,
        ),
      );
      console.log('');
      console.log(
        formatTable(
          [
            { title: 'spin ping-pong', value: (r: EndToEnd) => formatSize(r.size) },
            { title: 'ab us', value: (r) => us(r.ab), digits: 3 },
            { title: 'sab us', value: (r) => us(r.sab), digits: 3 },
            { title: 'ab GB/s', value: (r) => gbs(r.size, r.ab) },
            { title: 'sab GB/s', value: (r) => gbs(r.size, r.sab) },
          ],
          sabEndToEnd,
        ),
      );
    }

    const file = writeResults('shm', {
      params: { reps, quick, latSizes, bwSizes, ...params },
      unit: {
        oneWay: 'ns (median, min, max, samples)',
        bandwidth: 'size / oneWay.median bytes per ns = GB/s',
      },
      rows: rows.map((r) => ({
        size: r.size,
        kind: r.kind,
        oneWayNs: {
          shmSpin: r.spin,
          shmBlock: r.block,
          shmBlockHelperSpin: r.blockhs,
          workerSab: r.sab,
          tcp: r.tcp,
        },
        gbps: {
          shmSpin: gbs(r.size, r.spin),
          shmBlock: gbs(r.size, r.block),
          shmBlockHelperSpin: gbs(r.size, r.blockhs),
          workerSab: gbs(r.size, r.sab),
          tcp: gbs(r.size, r.tcp),
        },
      })),
      targets,
      bufferChoice: choice ? { inProcess: choice, spinPingPong: sabEndToEnd } : undefined,
    });
    console.log(`\nresults: ${file}`);
    return 0;
  },
};
