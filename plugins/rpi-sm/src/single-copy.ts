import { ENVELOPE_BYTES, EnvFlag } from '@ssi/mpi';
import { type CrossMemory, crossMemory, crossMemoryUnavailableReason } from '@ssi/shm';

/** Bytes after the envelope of a request to send that offers a single copy: the address. */
export const OFFER_BYTES = 8;

/** Bytes after the envelope of a SHARED answer: the receiver's address, then the split point. */
export const SHARE_BYTES = 16;

/**
 * Receiver → sender: the receiver read the body out of the sender's memory; the send is
 * complete (flags of the reply to a request to send, instead of a clear to send).
 */
export const TAKEN = EnvFlag.ACK | EnvFlag.LONG | EnvFlag.SECOND;

/**
 * Receiver → sender: write the tail of your body (from the split point on) to my address, then
 * answer WROTE; I read the head meanwhile. TAKEN follows once the receiver has every byte.
 */
export const SHARED = EnvFlag.ACK | EnvFlag.LONG | EnvFlag.READY;

/** Sender → receiver: the tail is written (with CANCELLED: it could not be; read it yourself). */
export const WROTE = EnvFlag.LONG | EnvFlag.SECOND;

/** Bytes of a body read first, alone, before the receiver asks the sender to share the copy. */
const PROBE_BYTES = 4096;

/**
 * Single-copy long messages through cross-memory attach (`@ssi/shm`'s `crossMemory`, Linux
 * `process_vm_readv`), the way Open MPI's vader moves them: the sender's request to send carries
 * the address of its buffer; the receiver, once a receive matched, copies the body straight from
 * the sender's memory into the receive buffer and answers TAKEN. One copy instead of two (into
 * the pool, out of it), and no clear to send. Where the kernel does not allow it (the first read
 * fails), the receiver answers with a clear to send as before and stops trying.
 * The sender's buffer stays put meanwhile: the send is not complete before TAKEN, and the bytes
 * of an ArrayBuffer never move.
 *
 * Shared copy: a body of at least `rpi_sm_split` bytes is copied by both processes at once, each
 * on its own core (the receiver reads the head, the sender writes the tail into the receive
 * buffer with `process_vm_writev`, after the receiver's SHARED gave it the address), which
 * halves the time the copy takes when both cores are free, as in a ping-pong of spinning ranks.
 */
export class SingleCopy {
  private cm: CrossMemory | null;
  /** Why it is off (the parameter, the kernel), for `rpi_verbose`; null while it is on. */
  reason: string | null;

  constructor(
    enabled: boolean,
    /** Bodies of at least this many bytes are copied by both processes (0: never). */
    readonly splitMin: number,
  ) {
    this.cm = enabled ? crossMemory() : null;
    this.reason = enabled ? crossMemoryUnavailableReason() : 'rpi_sm_single_copy is 0';
  }

  get on(): boolean {
    return this.cm !== null;
  }

  /** The address of `view`'s first byte in this process. */
  addressOf(view: Uint8Array): number {
    return this.cm!.addressOf(view);
  }

  /** Writes the offer for `body` (its address) after the envelope in `record`. */
  offer(record: Buffer, body: Uint8Array): void {
    record.writeDoubleLE(this.cm!.addressOf(body), ENVELOPE_BYTES);
  }

  /** Where the split between the receiver's head and the sender's tail of `n` bytes falls. */
  splitPoint(n: number): number {
    if (this.splitMin <= 0 || n < this.splitMin || n < 2 * PROBE_BYTES) return n;
    return (n >>> 1) & ~63; // cache-line aligned
  }

  /**
   * Reads the first bytes of a body alone: whether the kernel lets us read this sender at all,
   * before we ask it to share the copy (so a refusal still falls back cleanly to the pool).
   * Returns how many bytes it read, or -1 when the kernel refused.
   */
  probe(pid: number, address: number, into: Uint8Array): number {
    const n = Math.min(PROBE_BYTES, into.byteLength);
    return this.take(pid, address, into.subarray(0, n)) ? n : -1;
  }

  /** The receiver's address and split point a SHARED answer carries. */
  sharedOf(record: Buffer): { address: number; head: number } {
    return {
      address: record.readDoubleLE(ENVELOPE_BYTES),
      head: record.readDoubleLE(ENVELOPE_BYTES + 8),
    };
  }

  /** Writes `from` to `address` of process `pid`; false when it failed (the receiver reads it). */
  give(pid: number, address: number, from: Uint8Array): boolean {
    if (this.cm === null) return false;
    try {
      this.cm.writeTo(pid, address, from);
      return true;
    } catch {
      return false;
    }
  }

  /** The address a request to send offers, or -1 (no offer, or single copy is off here). */
  offered(record: Buffer): number {
    if (this.cm === null || record.byteLength < ENVELOPE_BYTES + OFFER_BYTES) return -1;
    return record.readDoubleLE(ENVELOPE_BYTES);
  }

  /**
   * Copies `into.byteLength` bytes at `address` of process `pid` into `into`. False when the
   * kernel refused: single copy is then off for good (the caller falls back to the pool).
   */
  take(pid: number, address: number, into: Uint8Array): boolean {
    if (this.cm === null) return false;
    if (into.byteLength === 0) return true;
    try {
      this.cm.readFrom(pid, address, into);
      return true;
    } catch (err) {
      this.cm = null;
      this.reason = `a read from process ${pid} failed: ${(err as Error).message}`;
      return false;
    }
  }
}
