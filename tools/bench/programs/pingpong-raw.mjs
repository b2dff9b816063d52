// The `raw socket` column of `ssi-bench pingpong`: the same ping-pong as pingpong-mpi.mjs, over
// one plain Node TCP socket on 127.0.0.1 (Nagle off) with the tcp rpi's framing: a 32-byte
// envelope (body length in its first 4 bytes, little endian) then the body. Reads use the tcp
// rpi's technique (`onread`): envelopes and short bodies land in a 256 KiB staging buffer and
// are copied into the preallocated receive buffer; a body with >= 16 KiB left is read by the
// kernel straight into it. Writes too: envelope + body copied into one buffer up to 16 KiB,
// above that envelope and body go out in one writev (cork/uncork) without a copy.
//
//   node pingpong-raw.mjs echo <max-size>                    prints "PORT <n>", echoes until closed
//   node pingpong-raw.mjs ping <port> <reps> <size>:<iters>...  prints one PINGPONG line per size
//
// PINGPONG {"size":S,"iters":I,"oneWayNs":[...]}: one sample per repetition (round trip / 2),
// after an unrecorded warm-up pass of a quarter of the iterations: what every driver prints.
// Before the first size, 4000 unrecorded round trips of 8 bytes warm up the process (the JIT).
// SSI_BENCH_CPUS="A,B": the ping side pins itself to CPU A, the echo side to CPU B (taskset).
import { spawnSync } from 'node:child_process';
import net from 'node:net';

const ENVELOPE_BYTES = 32; // ENVELOPE_BYTES of @ssi/mpi (packages/mpi/src/rpi/envelope.ts)
const STAGING_BYTES = 256 * 1024; // rpi_tcp_rcvbuf default
const DIRECT_MIN = 16 * 1024; // rpi_tcp_direct_min default
const COPY_LIMIT = 16 * 1024; // rpi_tcp_copy_limit default

/** SSI_BENCH_CPUS="A,B": process 0 pins itself (every thread) to CPU A, process 1 to CPU B. */
function pin(index) {
  const cpus = process.env.SSI_BENCH_CPUS;
  if (!cpus) return;
  const cpu = cpus.split(',')[index];
  const r = spawnSync('taskset', ['-a', '-p', '-c', cpu, String(process.pid)], {
    encoding: 'utf8',
  });
  if (r.status !== 0)
    throw new Error(`taskset -a -p -c ${cpu} ${process.pid}: ${r.error?.message ?? r.stderr}`);
}

/** One framed connection: `onMessage(length)` is called when a whole body is in `body`. */
class Framed {
  constructor(maxBody) {
    this.staging = Buffer.allocUnsafeSlow(STAGING_BYTES);
    this.body = Buffer.allocUnsafeSlow(Math.max(1, maxBody));
    this.hdr = Buffer.alloc(ENVELOPE_BYTES);
    this.out = Buffer.allocUnsafeSlow(ENVELOPE_BYTES + COPY_LIMIT);
    this.hdrFill = 0;
    this.inBody = false;
    this.bodyLen = 0;
    this.bodyOff = 0;
    this.direct = false;
    this.onMessage = () => {};
    this.socket = null;
    this.onread = {
      buffer: () => {
        if (this.inBody && this.bodyLen - this.bodyOff >= DIRECT_MIN) {
          this.direct = true;
          return this.body.subarray(this.bodyOff, this.bodyLen);
        }
        this.direct = false;
        return this.staging;
      },
      callback: (n, buf) => {
        if (this.direct) {
          this.bodyOff += n;
          if (this.bodyOff === this.bodyLen) this.done();
        } else this.process(buf, n);
        return true;
      },
    };
  }

  process(buf, n) {
    let off = 0;
    while (off < n) {
      if (!this.inBody) {
        const take = Math.min(ENVELOPE_BYTES - this.hdrFill, n - off);
        buf.copy(this.hdr, this.hdrFill, off, off + take);
        this.hdrFill += take;
        off += take;
        if (this.hdrFill < ENVELOPE_BYTES) return;
        this.hdrFill = 0;
        this.bodyLen = this.hdr.readUInt32LE(0);
        this.bodyOff = 0;
        this.inBody = true;
        if (this.bodyLen === 0) this.done();
      } else {
        const take = Math.min(this.bodyLen - this.bodyOff, n - off);
        buf.copy(this.body, this.bodyOff, off, off + take);
        this.bodyOff += take;
        off += take;
        if (this.bodyOff === this.bodyLen) this.done();
      }
    }
  }

  done() {
    this.inBody = false;
    this.direct = false;
    this.onMessage(this.bodyLen);
  }

  /** Sends envelope + `payload` (the rpi's writeSmall / writeTracked). */
  send(payload) {
    const len = payload.byteLength;
    const s = this.socket;
    this.out.fill(0, 0, ENVELOPE_BYTES);
    this.out.writeUInt32LE(len, 0);
    if (len <= COPY_LIMIT) {
      this.out.set(payload, ENVELOPE_BYTES);
      s.write(this.out.subarray(0, ENVELOPE_BYTES + len));
    } else {
      s.cork();
      s.write(this.out.subarray(0, ENVELOPE_BYTES));
      s.write(payload);
      s.uncork();
    }
  }
}

function echo(maxSize) {
  const server = net.createServer({ pauseOnConnect: true }, (accepted) => {
    server.close();
    const f = new Framed(maxSize);
    // Re-wrap the accepted handle so that reads go to our buffers (as the tcp rpi does).
    const handle = accepted._handle;
    accepted._handle = null;
    accepted.destroy();
    const s = new net.Socket({ handle, readable: true, writable: true, onread: f.onread });
    s.setNoDelay(true);
    f.socket = s;
    f.onMessage = (len) => f.send(f.body.subarray(0, len));
    s.on('error', () => {});
    s.on('close', () => process.exit(0));
    s.resume();
  });
  server.listen(0, '127.0.0.1', () => console.log(`PORT ${server.address().port}`));
}

async function ping(port, reps, plan) {
  const maxSize = Math.max(1, ...plan.map((p) => p.size));
  const f = new Framed(maxSize);
  const s = net.connect({ host: '127.0.0.1', port, noDelay: true, onread: f.onread });
  f.socket = s;
  await new Promise((resolve, reject) => {
    s.once('connect', resolve);
    s.once('error', reject);
  });
  let wake = null;
  f.onMessage = () => {
    const w = wake;
    wake = null;
    w();
  };
  const round = (buf) =>
    new Promise((resolve) => {
      wake = resolve;
      f.send(buf);
    });
  const sbuf = new Uint8Array(maxSize);
  for (let i = 0; i < maxSize; i++) sbuf[i] = (i * 7 + 1) & 0xff;
  for (let i = 0; i < 4000; i++) await round(sbuf.subarray(0, Math.min(8, maxSize)));
  for (const { size, iters } of plan) {
    const buf = sbuf.subarray(0, size);
    const oneWayNs = [];
    for (let r = 0; r <= reps; r++) {
      const n = r === 0 ? Math.ceil(iters / 4) : iters; // r = 0: the warm-up pass
      if (size > 0) f.body[0] = f.body[size - 1] = 0;
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) await round(buf);
      const ns = Number(process.hrtime.bigint() - t0) / n / 2;
      if (size > 0 && (f.body[0] !== sbuf[0] || f.body[size - 1] !== sbuf[size - 1]))
        throw new Error(`size ${size}: the echo does not match what was sent`);
      if (r > 0) oneWayNs.push(ns);
    }
    console.log(`PINGPONG ${JSON.stringify({ size, iters, oneWayNs })}`);
  }
  s.end();
  s.destroy();
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === 'echo') {
  pin(1);
  echo(Number(rest[0]));
} else if (mode === 'ping') {
  const [port, reps, ...pairs] = rest;
  const plan = pairs.map((p) => {
    const [size, iters] = p.split(':').map(Number);
    return { size, iters };
  });
  pin(0);
  await ping(Number(port), Number(reps), plan);
} else {
  console.error('usage: pingpong-raw.mjs echo <max-size> | ping <port> <reps> <size>:<iters>...');
  process.exit(2);
}
