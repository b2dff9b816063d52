import type net from 'node:net';
import type { RpiRequest } from '@ssi/mpi';
import { ENVELOPE_BYTES, writeEnvelope } from '@ssi/mpi';

const OUTBOX_BYTES = 64 * 1024;

/** A tracked payload: one buffer, or ranges of the user's buffer written as one (a gather send). */
export type Payload = Uint8Array | readonly Uint8Array[];

function payloadBytes(p: Payload): number {
  if (!Array.isArray(p)) return (p as Uint8Array).byteLength;
  let n = 0;
  for (const r of p as readonly Uint8Array[]) n += r.byteLength;
  return n;
}

/**
 * A write kept back while the connection is held (`hold`): the envelope (and a small payload)
 * copied, or a large payload by reference with the send it belongs to (told when it is flushed).
 */
interface HeldWrite {
  head: Buffer;
  payload: Payload | null;
  req: RpiRequest | null;
}

/**
 * The writing side of one connection: writes that avoid allocation (an envelope and a small
 * payload are copied into a per-connection outbox and go out as one write; a large payload goes
 * out after its envelope in one writev, without a copy, and its send is told when the kernel has
 * it), the byte counter a drain compares, and the writes a checkpoint holds back.
 */
export class ConnectionWriter {
  /** The connection's socket (set once it is attached). */
  socket!: net.Socket;
  /** Bytes handed to the socket, everything included (crtcp's drain counters). */
  bytesOut = 0;
  /** Writes kept back while a checkpoint holds the connection (null: not holding). */
  private heldWrites: HeldWrite[] | null = null;
  /** Bytes in `heldWrites`. */
  heldBytes = 0;
  private outbox = Buffer.allocUnsafeSlow(OUTBOX_BYTES);
  private outPos = 0;
  /** Tracked payloads in the order they were written, told `flushed` as each reaches the kernel. */
  private fqReq: (RpiRequest | null)[] = [];
  private fqId: number[] = [];
  private fqSeq: number[] = [];
  private fqHead = 0;

  constructor(
    /** A tracked payload reached the kernel. */
    private readonly flushed: (req: RpiRequest) => void,
  ) {}

  /** Takes over the writes held by the connection this one replaces (a reconnect). */
  takeHeld(old: ConnectionWriter): void {
    this.heldWrites = old.heldWrites;
    this.heldBytes = old.heldBytes;
    old.heldWrites = null;
    old.heldBytes = 0;
  }

  // ---- holding writes (a checkpoint's drain) -------------------------------------------------

  /** From now on every protocol write is kept back (not written, not counted) until `release`. */
  hold(): void {
    if (this.heldWrites === null) this.heldWrites = [];
  }

  get holding(): boolean {
    return this.heldWrites !== null;
  }

  private keepBack(w: HeldWrite): void {
    this.heldWrites!.push(w);
    this.heldBytes += w.head.byteLength + (w.payload === null ? 0 : payloadBytes(w.payload));
  }

  /** Writes what was held, in order, and stops holding. */
  release(): void {
    const held = this.heldWrites;
    if (held === null) return;
    this.heldWrites = null;
    this.heldBytes = 0;
    const socket = this.socket;
    for (const { head, payload, req } of held) {
      if (payload === null) {
        this.bytesOut += head.byteLength;
        socket.write(head);
        continue;
      }
      this.bytesOut += head.byteLength + payloadBytes(payload);
      socket.cork();
      socket.write(head);
      this.writePayload(payload);
      socket.uncork();
      const flushed = socket.writableLength === 0;
      this.fqReq.push(flushed ? null : req);
      this.fqId.push(req!.id);
      this.fqSeq.push(req!.seq);
      if (flushed) this.flushed(req!);
    }
  }

  // ---- writing -----------------------------------------------------------------------------

  /** A handshake write, counted. */
  write(bytes: Uint8Array): void {
    this.bytesOut += bytes.byteLength;
    this.socket.write(bytes);
  }

  /** Bytes queued in Node that have not reached the kernel yet. */
  get queued(): number {
    return this.socket.writableLength;
  }

  /**
   * Writes an envelope and a small payload (copied into the outbox) as one write. After it
   * returns the caller's payload may be reused.
   */
  writeSmall(
    length: number,
    tag: number,
    flags: number,
    rank: number,
    cid: number,
    seq: number,
    sid: number,
    rid: number,
    payload: Uint8Array | null,
  ): void {
    const plen = payload === null ? 0 : payload.byteLength;
    const total = ENVELOPE_BYTES + plen;
    if (this.heldWrites !== null) {
      const head = Buffer.allocUnsafe(total);
      writeEnvelope(head, 0, length, tag, flags, rank, cid, seq, sid, rid);
      if (plen > 0) head.set(payload!, ENVELOPE_BYTES);
      this.keepBack({ head, payload: null, req: null });
      return;
    }
    if (this.outPos + total > this.outbox.length) {
      this.outbox = Buffer.allocUnsafeSlow(Math.max(OUTBOX_BYTES, total));
      this.outPos = 0;
    }
    const start = this.outPos;
    const out = this.outbox;
    writeEnvelope(out, start, length, tag, flags, rank, cid, seq, sid, rid);
    if (plen > 0) out.set(payload!, start + ENVELOPE_BYTES);
    const end = start + total;
    const socket = this.socket;
    this.bytesOut += total;
    socket.write(out.subarray(start, end));
    this.outPos = socket.writableLength === 0 ? 0 : end;
  }

  /**
   * Writes an envelope followed by `payload` without copying it (one writev; a list of ranges is
   * gathered by the same writev). `req` is told when the payload has reached the kernel
   * (`sendFlushed`), at once if the write completed synchronously. Returns whether it did.
   */
  writeTracked(
    req: RpiRequest,
    length: number,
    tag: number,
    flags: number,
    rank: number,
    cid: number,
    seq: number,
    sid: number,
    rid: number,
    payload: Payload,
  ): boolean {
    if (this.heldWrites !== null) {
      const head = Buffer.allocUnsafe(ENVELOPE_BYTES);
      writeEnvelope(head, 0, length, tag, flags, rank, cid, seq, sid, rid);
      this.keepBack({ head, payload, req });
      return false;
    }
    if (this.outPos + ENVELOPE_BYTES > this.outbox.length) {
      this.outbox = Buffer.allocUnsafeSlow(OUTBOX_BYTES);
      this.outPos = 0;
    }
    const start = this.outPos;
    const out = this.outbox;
    writeEnvelope(out, start, length, tag, flags, rank, cid, seq, sid, rid);
    const socket = this.socket;
    this.bytesOut += ENVELOPE_BYTES + length;
    socket.cork();
    socket.write(out.subarray(start, start + ENVELOPE_BYTES));
    this.writePayload(payload);
    socket.uncork();
    if (socket.writableLength === 0) {
      this.outPos = 0;
      this.fqReq.push(null);
      this.fqId.push(0);
      this.fqSeq.push(0);
      return true;
    }
    this.outPos = start + ENVELOPE_BYTES;
    this.fqReq.push(req);
    this.fqId.push(req.id);
    this.fqSeq.push(req.seq);
    return false;
  }

  /** Queues a payload on the corked socket; `onFlushed` runs once its last byte is written. */
  private writePayload(payload: Payload): void {
    const socket = this.socket;
    if (!Array.isArray(payload)) {
      socket.write(payload as Uint8Array, this.onFlushed);
      return;
    }
    const ranges = payload as readonly Uint8Array[];
    const last = ranges.length - 1;
    for (let i = 0; i < last; i++) socket.write(ranges[i]!);
    socket.write(ranges[last]!, this.onFlushed);
  }

  private readonly onFlushed = (err?: Error | null): void => {
    const i = this.fqHead++;
    const req = this.fqReq[i]!;
    const id = this.fqId[i]!;
    const seq = this.fqSeq[i]!;
    this.fqReq[i] = null;
    if (this.fqHead === this.fqReq.length) {
      this.fqReq.length = 0;
      this.fqId.length = 0;
      this.fqSeq.length = 0;
      this.fqHead = 0;
    }
    if (err) return; // the close handler fails what is pending
    // id and seq: the same send pass (persistent requests keep their id, pooled ones their seq).
    if (req !== null && req.id === id && req.seq === seq) this.flushed(req);
  };
}
