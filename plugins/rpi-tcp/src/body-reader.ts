import type { RecvScatter, RpiRequest, UnexpectedMessage } from '@ssi/mpi';

/** Bytes at the end of a body that are read through the read buffer (see `nextBuffer`). */
const BODY_TAIL = 64;

/** How body bytes reached their destination (for tests, tuning and `rpi_verbose`). */
export interface ReadStats {
  /** Socket reads handled (each one a turn of the event loop's poll phase for this socket). */
  reads: number;
  /** Read by the kernel straight into a receive buffer (or an unexpected message's memory). */
  direct: number;
  /** Copied from the read buffer into a posted receive's buffer. */
  copiedPosted: number;
  /** Copied from the read buffer into memory of an unexpected message. */
  copiedUnexpected: number;
  /** Scattered receives (a derived datatype) whose body was read here, and their bytes. */
  scatteredRecvs: number;
  scatteredBytes: number;
}

/** The read buffers and counters a connection's body reader shares with its module. */
export interface ReadBuffers {
  /** Shared read buffer for envelopes and short payloads. */
  readonly staging: Buffer;
  /** A prefix of `staging`: used while rendezvous bodies are expected, to keep their head small. */
  readonly stagingSmall: Buffer;
  /** Bodies with at least this many bytes left are read straight into their destination. */
  readonly directMin: number;
  /** Byte counters: how message bodies were read. */
  readonly stats: ReadStats;
}

/**
 * The payload half of a connection's reading: where the bytes of the body being read go (a
 * posted receive's buffer, a scattered receive's layout, an unexpected message's memory, or
 * nowhere), and which buffer the kernel reads into next — straight into the destination for a
 * long body, else the shared read buffer, whose bytes `copyIn` moves. The connection's state
 * machine (envelopes, handshake) decides when a body begins and ends.
 */
export class BodyReader {
  private target: Uint8Array | null = null;
  /** A scattered receive's layout the body goes into (`target` is null then). */
  private sink: RecvScatter | null = null;
  private keep = 0;
  private length = 0;
  private offset = 0;
  private req: RpiRequest | null = null;
  private msg: UnexpectedMessage | null = null;
  /** The buffer handed out for the pending read is the destination itself. */
  directRead = false;
  /** The last read filled the read buffer it was given: more is probably queued. */
  private lastReadFilled = false;
  /** The target the pending direct read was set up for (a redirect may change `target`). */
  private directTarget: Uint8Array | null = null;
  /** The pending direct read goes into a run of a scattered receive's layout (`sink.run`). */
  private directRun = false;

  constructor(private readonly buffers: ReadBuffers) {}

  /** Expects `length` body bytes; the first `keep` go into `target` (the rest are dropped). */
  expect(
    target: Uint8Array | null,
    keep: number,
    length: number,
    req: RpiRequest | null,
    msg: UnexpectedMessage | null,
  ): void {
    this.target = target;
    this.sink = null;
    this.keep = target === null ? 0 : keep;
    this.length = length;
    this.offset = 0;
    this.req = req;
    this.msg = msg;
  }

  /** Expects `length` body bytes for a scattered receive; the first `keep` go into its layout. */
  expectScatter(req: RpiRequest, keep: number, length: number): void {
    this.expect(null, 0, length, req, null);
    this.sink = req.scatter;
    this.keep = keep;
    this.buffers.stats.scatteredRecvs++;
  }

  /**
   * A receive matched the unexpected message `msg`: if its body is being read now, the rest goes
   * straight into the receive's buffer (what has arrived is copied once).
   */
  redirect(msg: UnexpectedMessage, req: RpiRequest, keep: number): boolean {
    if (this.msg !== msg) return false;
    if (req.buf === null && req.scatter === null) return false;
    const have = Math.min(this.offset, keep);
    if (req.scatter !== null) {
      if (have > 0) req.scatter.write(msg.data!.subarray(0, have), 0);
      this.sink = req.scatter;
      this.buffers.stats.scatteredRecvs++;
    } else if (have > 0) req.buf!.set(msg.data!.subarray(0, have));
    this.target = req.buf;
    this.keep = keep;
    this.msg = null;
    this.req = req;
    return true;
  }

  /**
   * The buffer for the next socket read: `inBody` (a body is being read) may make it the
   * destination itself; `mayBurst` (no long bodies announced in either direction) lets a burst
   * use the whole read buffer.
   */
  nextBuffer(inBody: boolean, mayBurst: boolean): Uint8Array {
    this.directRun = false;
    if (inBody && this.sink !== null) return this.nextScatterBuffer(this.sink);
    if (inBody && this.target !== null) {
      const left = this.keep - this.offset;
      // A body that is being read directly stays direct to its tail, however the kernel split
      // it: only its head and its last bytes are ever copied.
      const direct =
        this.directTarget === this.target ? left > BODY_TAIL : left >= this.buffers.directMin;
      if (direct) {
        this.directRead = true;
        this.directTarget = this.target;
        // The last bytes of a body come through the read buffer, with whatever follows them
        // (often the receiver's next credit): the messages behind a body are then seen before
        // the program learns that its receive is done, and may act on them.
        const tail = this.keep === this.length ? Math.min(BODY_TAIL, left >> 1) : 0;
        return this.target.subarray(this.offset, this.keep - tail);
      }
    }
    this.directRead = false;
    // The whole read buffer only while a burst is being read (the last read filled it). Node
    // picks the buffer for the next read as soon as a read is handled, before the program may
    // post a receive and grant a credit; whatever comes after a pause may be a long body, of
    // which only the head should be copied. Likewise while long bodies are known to be coming.
    return this.lastReadFilled && mayBurst ? this.buffers.staging : this.buffers.stagingSmall;
  }

  /**
   * A scattered body: straight into the user's memory where the layout has a contiguous run of
   * `directMin` bytes or more here, else through the read buffer, chunk by chunk, starting at an
   * address that lines up with the packed offset (the unpacker then copies whole words).
   */
  private nextScatterBuffer(sink: RecvScatter): Uint8Array {
    const left = this.keep - this.offset;
    if (left > 0) {
      const tail = this.keep === this.length ? Math.min(BODY_TAIL, left >> 1) : 0;
      const run = sink.run(this.offset, this.buffers.directMin, left - tail);
      if (run !== null) {
        this.directRead = true;
        this.directRun = true;
        this.directTarget = run;
        return run;
      }
    }
    this.directRead = false;
    return this.buffers.staging.subarray(this.offset & 7);
  }

  /** A read of `nread` bytes into the buffer `nextBuffer` gave landed (`buf`). */
  noteRead(nread: number, buf: Uint8Array): void {
    this.lastReadFilled = !this.directRead && nread === buf.length;
  }

  /**
   * Bytes read straight into the destination (`directRead`). Returns whether the body is
   * complete.
   */
  landedDirect(nread: number, buf: Buffer): boolean {
    if (!this.directRun && this.target !== this.directTarget && this.offset < this.keep) {
      // The body was redirected to a receive after this read had been set up.
      const k = Math.min(nread, this.keep - this.offset);
      if (this.target !== null) this.target.set(buf.subarray(0, k), this.offset);
      else this.sink?.write(buf.subarray(0, k), this.offset);
    }
    this.offset += nread;
    this.buffers.stats.direct += nread;
    return this.offset === this.length;
  }

  /**
   * Moves what of the body lies in `buf[off, n)` (the read buffer) to its destination. Returns
   * the bytes taken; the body is complete when `complete` says so.
   */
  copyIn(buf: Buffer, off: number, n: number): number {
    const take = Math.min(this.length - this.offset, n - off);
    if (this.target !== null && this.offset < this.keep) {
      const k = Math.min(take, this.keep - this.offset);
      buf.copy(this.target, this.offset, off, off + k);
      if (this.req !== null) this.buffers.stats.copiedPosted += k;
      else this.buffers.stats.copiedUnexpected += k;
    } else if (this.sink !== null && this.offset < this.keep) {
      const k = Math.min(take, this.keep - this.offset);
      this.sink.write(buf.subarray(off, off + k), this.offset);
      this.buffers.stats.scatteredBytes += k;
    }
    this.offset += take;
    return take;
  }

  /** Every byte of the body has been read. */
  get complete(): boolean {
    return this.offset === this.length;
  }

  /** The posted receive the body is read for (null: none, or an unexpected message). */
  get request(): RpiRequest | null {
    return this.req;
  }

  /** The unexpected message the body is read into (null: none, or a posted receive). */
  get message(): UnexpectedMessage | null {
    return this.msg;
  }

  /** The body is over (take `request` and `message` first): forgets it. */
  finish(): void {
    this.target = null;
    this.sink = null;
    this.req = null;
    this.msg = null;
    this.directRead = false;
    this.directRun = false;
    this.directTarget = null;
  }
}
