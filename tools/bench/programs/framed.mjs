// The raw socket baseline of `ssi-bench pingpong`: one plain Node TCP connection with the tcp
// rpi's framing (a 32-byte envelope, body length in its first 4 bytes, little endian, then the
// body) and its read and write techniques (see pingpong-raw.mjs). Shared by the `raw socket`
// driver (pingpong-raw.mjs) and the paired mode of the MPI driver (pingpong-mpi.mjs), so that
// both measure exactly the same code.
import { spawnSync } from 'node:child_process';
import net from 'node:net';

const ENVELOPE_BYTES = 32; // ENVELOPE_BYTES of @ssi/mpi (packages/mpi/src/rpi/envelope.ts)
const STAGING_BYTES = 256 * 1024; // rpi_tcp_read_buffer default
const DIRECT_MIN = 16 * 1024; // rpi_tcp_direct_min default
const COPY_LIMIT = 16 * 1024; // rpi_tcp_copy_limit default
const SMALL_READ = 4 * 1024; // the tcp rpi's read size after a pause (see Framed.onread)

/**
 * SSI_BENCH_CPUS="A,B": process 0 pins itself to CPU A, process 1 to CPU B: every thread, unless
 * SSI_BENCH_PIN_THREADS=main: then the main thread only (and the threads it starts later, which
 * inherit its binding), V8's compiler and GC threads left to the scheduler. On 2 CPUs that only
 * moves them next to the peer's main thread (measured: no difference in a fresh sm rank's warm-up).
 */
export function pin(index) {
  const cpus = process.env.SSI_BENCH_CPUS;
  if (!cpus) return;
  const cpu = cpus.split(',')[index];
  const all = process.env.SSI_BENCH_PIN_THREADS !== 'main';
  const args = [...(all ? ['-a'] : []), '-p', '-c', cpu, String(process.pid)];
  const r = spawnSync('taskset', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`taskset ${args.join(' ')}: ${r.error?.message ?? r.stderr}`);
}

/**
 * SSI_BENCH_RAW_POLL=1: keep the event loop busy with immediates from now until the returned
 * stop function is called, so that libuv polls its sockets without sleeping (what the MPI
 * layer's progress engine does while it waits, issue 18); unset: the loop sleeps in epoll
 * between messages. `stop()` returns how many immediates ran (0 when not polling).
 */
export function keepPolling() {
  if (process.env.SSI_BENCH_RAW_POLL !== '1') return () => 0;
  let on = true;
  let spins = 0;
  const spin = () => {
    spins++;
    if (on) setImmediate(spin);
  };
  setImmediate(spin);
  return () => {
    on = false;
    return spins;
  };
}

/** One framed connection: `onMessage(length)` is called when a whole body is in `body`. */
export class Framed {
  constructor(maxBody) {
    this.staging = Buffer.allocUnsafeSlow(STAGING_BYTES);
    this.stagingSmall = this.staging.subarray(0, SMALL_READ);
    this.lastFilled = false;
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
    // The tcp rpi's reads (its BodyReader): the whole staging buffer only while a burst is read
    // (the last read filled it); after a pause 4 KiB, the envelope and the head of whatever
    // comes, so that a long body is read straight into `body` and not copied from staging.
    this.onread = {
      buffer: () => {
        if (this.inBody && this.bodyLen - this.bodyOff >= DIRECT_MIN) {
          this.direct = true;
          return this.body.subarray(this.bodyOff, this.bodyLen);
        }
        this.direct = false;
        return this.lastFilled ? this.staging : this.stagingSmall;
      },
      callback: (n, buf) => {
        this.lastFilled = !this.direct && n === buf.length;
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

/**
 * Listens on 127.0.0.1 (or, given `unixPath`, on that Unix-domain socket) for one connection and
 * echoes every message on it (the echo side). Resolves with the port (or the path) once
 * listening; `closed` resolves when the connection ends.
 */
export async function listenEcho(maxSize, unixPath) {
  let onClosed;
  const closed = new Promise((resolve) => {
    onClosed = resolve;
  });
  const server = net.createServer({ pauseOnConnect: true }, (accepted) => {
    server.close();
    const f = new Framed(maxSize);
    // Re-wrap the accepted handle so that reads go to our buffers (as the tcp rpi does).
    const handle = accepted._handle;
    accepted._handle = null;
    accepted.destroy();
    const s = new net.Socket({ handle, readable: true, writable: true, onread: f.onread });
    if (!unixPath) s.setNoDelay(true); // a Unix socket has no Nagle
    f.socket = s;
    f.onMessage = (len) => f.send(f.body.subarray(0, len));
    s.on('error', () => {});
    s.on('close', onClosed);
    s.resume();
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    if (unixPath) server.listen(unixPath, resolve);
    else server.listen(0, '127.0.0.1', resolve);
  });
  return { port: unixPath ?? server.address().port, closed };
}

/**
 * Connects to an echo side (the ping side): `round(buf)` sends `buf` and resolves when the echo
 * is in `framed.body`; `close()` ends the connection. `port` is a TCP port on 127.0.0.1, or a
 * Unix-domain socket path (a string that is not a number).
 */
export async function connectPing(port, maxSize) {
  const f = new Framed(maxSize);
  const where = /^\d+$/.test(String(port))
    ? { host: '127.0.0.1', port: Number(port), noDelay: true }
    : { path: String(port) };
  const s = net.connect({ ...where, onread: f.onread });
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
  const close = () => {
    s.end();
    s.destroy();
  };
  return { framed: f, round, close };
}
