import { MessageHeader } from '../matching/header';

/**
 * The envelope that prefixes every message on a byte-stream transport (App. C.1.8,
 * `struct lam_ssi_rpi_envl`), 32 bytes little-endian:
 *
 *     0 length   u32  payload bytes (the whole message, also for a rendezvous request)
 *     4 tag      i32
 *     8 flags    u32  protocol bits (low 16) | data kind << 16
 *    12 rank     i32  sender's rank in the communicator
 *    16 cid      u32  context id
 *    20 seq      u32  sequence number (per sender → receiver); in a credit: messages seen
 *    24 sid      u32  sender's request id (echoed by acknowledgements)
 *    28 rid      u32  receiver's request id (in clear-to-send and rendezvous bodies), or the
 *                     credit an eager message uses (0: none)
 *
 * Shared by tcp, crtcp and later transports so that all speak the same framing.
 */
export const ENVELOPE_BYTES = 32;

export const Env = {
  LENGTH: 0,
  TAG: 4,
  FLAGS: 8,
  RANK: 12,
  CID: 16,
  SEQ: 20,
  SID: 24,
  RID: 28,
} as const;

/** Protocol bits of `flags` (LAM's C2C* flags). */
export const EnvFlag = {
  /** Eager message: `length` payload bytes follow the envelope. */
  SHORT: 1 << 0,
  /** Rendezvous request: no payload; the receiver answers ACK|LONG when it matched. */
  LONG: 1 << 1,
  /** Acknowledgement (receiver → sender). With LONG: clear to send. Alone: synchronous receipt. */
  ACK: 1 << 2,
  /** Rendezvous body: `length` payload bytes follow; `rid` names the receive. */
  SECOND: 1 << 3,
  /** Synchronous mode: the receiver must acknowledge the match. */
  SSEND: 1 << 4,
  /** Sender → receiver: please take back message `sid` if still unmatched. */
  CANCEL: 1 << 5,
  /** With CANCEL, receiver → sender: cancelled. Without: too late, it matched. */
  CANCELLED: 1 << 6,
  /**
   * Receiver → sender, a credit: a receive for (`cid`, `tag`) of up to `length` bytes is posted
   * and no message of the sender's first `seq` can have matched it; `rid` names the credit. The
   * sender may send its next message eagerly whatever its length. With CANCEL: credit withdrawn.
   */
  READY: 1 << 7,
} as const;

export const KIND_SHIFT = 16;
export const PROTOCOL_MASK = 0xffff;

/**
 * An envelope read off the wire: the header the MPI layer matches on plus the protocol fields.
 * A transport keeps one per connection and refills it for every envelope (no allocation).
 */
export class WireEnvelope extends MessageHeader {
  /** Protocol bits (`EnvFlag`), without the data kind. */
  flags = 0;
  /** Sender's request id. */
  sid = 0;
  /** Receiver's request id, or the credit an eager message uses. */
  rid = 0;

  /** Fills the record from the 32 envelope bytes at `off` of `buf`. */
  read(buf: Buffer, off: number): this {
    const flags = buf.readUInt32LE(off + 8);
    this.length = buf.readUInt32LE(off);
    this.tag = buf.readInt32LE(off + 4);
    this.flags = flags & PROTOCOL_MASK;
    this.kind = flags >>> KIND_SHIFT;
    this.rank = buf.readInt32LE(off + 12);
    this.cid = buf.readUInt32LE(off + 16);
    this.seq = buf.readUInt32LE(off + 20);
    this.sid = buf.readUInt32LE(off + 24);
    this.rid = buf.readUInt32LE(off + 28);
    return this;
  }
}

/** Writes an envelope at `off` of `buf`. */
export function writeEnvelope(
  buf: Buffer,
  off: number,
  length: number,
  tag: number,
  flags: number,
  rank: number,
  cid: number,
  seq: number,
  sid: number,
  rid: number,
): void {
  buf.writeUInt32LE(length, off);
  buf.writeInt32LE(tag, off + 4);
  buf.writeUInt32LE(flags >>> 0, off + 8);
  buf.writeInt32LE(rank, off + 12);
  buf.writeUInt32LE(cid >>> 0, off + 16);
  buf.writeUInt32LE(seq >>> 0, off + 20);
  buf.writeUInt32LE(sid >>> 0, off + 24);
  buf.writeUInt32LE(rid >>> 0, off + 28);
}

/** A decoded envelope (for tests and diagnostics; transports read fields in place). */
export interface Envelope {
  length: number;
  tag: number;
  flags: number;
  kind: number;
  rank: number;
  cid: number;
  seq: number;
  sid: number;
  rid: number;
}

export function readEnvelope(buf: Buffer, off = 0): Envelope {
  const flags = buf.readUInt32LE(off + 8);
  return {
    length: buf.readUInt32LE(off),
    tag: buf.readInt32LE(off + 4),
    flags: flags & PROTOCOL_MASK,
    kind: flags >>> KIND_SHIFT,
    rank: buf.readInt32LE(off + 12),
    cid: buf.readUInt32LE(off + 16),
    seq: buf.readUInt32LE(off + 20),
    sid: buf.readUInt32LE(off + 24),
    rid: buf.readUInt32LE(off + 28),
  };
}
