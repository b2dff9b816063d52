// @ts-check
/**
 * The wire format of this transport. Everything on a connection is a frame:
 *
 *     u32 frame length (the bytes after this field) | 32-byte envelope | payload
 *
 * all numbers little-endian. The envelope holds what the MPI layer needs to match a message (the
 * communicator's context id, the sender's rank in it, the tag, the data kind, the sequence
 * number; the payload's length is the frame's length less the envelope) and what this protocol
 * needs: what the frame is (`op`), its flags, and the sender's request id (`sendId`), which the
 * receiver echoes in acknowledgements and cancel answers so the sender knows which send they
 * are about. The format is this module's own: any transport may choose its own.
 */
import { allocMessage } from '@ssi/mpi';

/** What a frame is. */
export const Op = {
  /** Dialer → acceptor, the first frame of a connection: "I am world rank `rank`" + proof. */
  HELLO: 1,
  /** A message: the payload is its bytes. */
  MESSAGE: 2,
  /** Receiver → sender: message `sendId` matched a receive (completes a synchronous send). */
  ACK: 3,
  /** Sender → receiver: take message `sendId` back if no receive has matched it yet. */
  CANCEL: 4,
  /** Receiver → sender: the answer to CANCEL (flag CANCELLED: taken back; without: too late). */
  CANCEL_REPLY: 5,
};

/** Bits of `flags`. */
export const Flag = {
  /** MESSAGE: the sender waits for an ACK when a receive matches it. */
  SYNC: 1,
  /** CANCEL_REPLY: the message was taken back. */
  CANCELLED: 2,
};

const LENGTH_BYTES = 4;
const ENVELOPE_BYTES = 32;
/** The longest payload a frame can carry (its length must fit the u32 length field). */
export const MAX_PAYLOAD = 0xffffffff - ENVELOPE_BYTES;

/**
 * @typedef {object} Envelope
 * @property {number} op        what the frame is (`Op`)
 * @property {number} flags     `Flag` bits
 * @property {number} cid       context id of the communicator
 * @property {number} rank      sender's rank in the communicator (HELLO: its world rank)
 * @property {number} tag
 * @property {number} kind      data kind of the payload (the MPI layer's `DataKind`)
 * @property {number} seq       sequence number of the message (per sender and receiver)
 * @property {number} sendId    the sender's request id
 */

/**
 * One frame as bytes: the envelope, then a *copy* of `payload`. The copy is what lets a send
 * complete as soon as it is written: the user may reuse the buffer at once.
 * @param {Envelope} env
 * @param {Uint8Array | null} payload
 * @returns {Buffer}
 */
export function encodeFrame(env, payload) {
  const length = payload === null ? 0 : payload.byteLength;
  const frame = Buffer.allocUnsafe(LENGTH_BYTES + ENVELOPE_BYTES + length);
  frame.writeUInt32LE(ENVELOPE_BYTES + length, 0);
  frame.writeUInt32LE(env.op, 4);
  frame.writeUInt32LE(env.flags, 8);
  frame.writeUInt32LE(env.cid, 12);
  frame.writeInt32LE(env.rank, 16);
  frame.writeInt32LE(env.tag, 20);
  frame.writeUInt32LE(env.kind, 24);
  frame.writeUInt32LE(env.seq, 28);
  frame.writeUInt32LE(env.sendId, 32);
  if (payload !== null) frame.set(payload, LENGTH_BYTES + ENVELOPE_BYTES);
  return frame;
}

/**
 * Cuts the byte stream of one connection back into frames. TCP delivers bytes in chunks of any
 * size: a chunk may end in the middle of an envelope, hold several frames, or be a small piece
 * of a long payload. The reader fills the envelope first, then a payload buffer of exactly the
 * frame's size (so a long message is copied once, not re-joined at every chunk), and hands each
 * complete frame to `onFrame`, in order.
 */
export class FrameReader {
  /** @param {(env: Envelope, payload: Uint8Array) => void} onFrame */
  constructor(onFrame) {
    this.onFrame = onFrame;
    /** The longest payload accepted: small until the peer is authenticated (see Peer). */
    this.maxPayload = MAX_PAYLOAD;
    this.head = Buffer.alloc(LENGTH_BYTES + ENVELOPE_BYTES);
    this.headFilled = 0;
    /** @type {Uint8Array | null} the payload being filled, once the envelope is complete */
    this.payload = null;
    this.payloadFilled = 0;
    /** @type {Envelope | null} */
    this.envelope = null;
  }

  /**
   * Takes the next chunk of the stream. Throws on a frame no peer of this module sends (the
   * caller closes the connection).
   * @param {Buffer} chunk
   */
  push(chunk) {
    let at = 0;
    while (at < chunk.length) {
      if (this.payload === null) {
        const n = Math.min(this.head.length - this.headFilled, chunk.length - at);
        chunk.copy(this.head, this.headFilled, at, at + n);
        this.headFilled += n;
        at += n;
        if (this.headFilled < this.head.length) return;
        this.startPayload();
      }
      const payload = /** @type {Uint8Array} */ (this.payload);
      const n = Math.min(payload.byteLength - this.payloadFilled, chunk.length - at);
      payload.set(chunk.subarray(at, at + n), this.payloadFilled);
      this.payloadFilled += n;
      at += n;
      if (this.payloadFilled === payload.byteLength) this.finishFrame();
    }
  }

  /** The envelope is complete: read it and make room for the payload. */
  startPayload() {
    const h = this.head;
    const frameLength = h.readUInt32LE(0);
    if (frameLength < ENVELOPE_BYTES) {
      throw new Error(`a frame of ${frameLength} bytes is shorter than its envelope`);
    }
    if (frameLength - ENVELOPE_BYTES > this.maxPayload) {
      throw new Error(
        `a frame of ${frameLength - ENVELOPE_BYTES} payload bytes, at most ${this.maxPayload} expected`,
      );
    }
    this.envelope = {
      op: h.readUInt32LE(4),
      flags: h.readUInt32LE(8),
      cid: h.readUInt32LE(12),
      rank: h.readInt32LE(16),
      tag: h.readInt32LE(20),
      kind: h.readUInt32LE(24),
      seq: h.readUInt32LE(28),
      sendId: h.readUInt32LE(32),
    };
    // Memory the MPI layer may hand to a receive without a buffer as it is (allocMessage).
    this.payload = allocMessage(frameLength - ENVELOPE_BYTES);
    this.payloadFilled = 0;
  }

  /** The payload is complete: hand the frame over and start on the next envelope. */
  finishFrame() {
    const env = /** @type {Envelope} */ (this.envelope);
    const payload = /** @type {Uint8Array} */ (this.payload);
    this.envelope = null;
    this.payload = null;
    this.headFilled = 0;
    this.onFrame(env, payload);
  }
}
