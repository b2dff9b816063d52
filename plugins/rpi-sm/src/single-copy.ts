import { ENVELOPE_BYTES, EnvFlag } from '@ssi/mpi';
import { type CrossMemory, crossMemory, crossMemoryUnavailableReason } from '@ssi/shm';

/** Bytes after the envelope of a request to send that offers a single copy: the address. */
export const OFFER_BYTES = 8;

/**
 * Receiver → sender: the receiver read the body out of the sender's memory; the send is
 * complete (flags of the reply to a request to send, instead of a clear to send).
 */
export const TAKEN = EnvFlag.ACK | EnvFlag.LONG | EnvFlag.SECOND;

/**
 * Single-copy long messages through cross-memory attach (`@ssi/shm`'s `crossMemory`, Linux
 * `process_vm_readv`), the way Open MPI's vader moves them: the sender's request to send carries
 * the address of its buffer; the receiver, once a receive matched, copies the body straight from
 * the sender's memory into the receive buffer and answers TAKEN. One copy instead of two (into
 * the pool, out of it), and no clear to send. Where the kernel does not allow it (the first read
 * fails), the receiver answers with a clear to send as before and stops trying.
 * The sender's buffer stays put meanwhile: the send is not complete before TAKEN, and the bytes
 * of an ArrayBuffer never move.
 */
export class SingleCopy {
  private cm: CrossMemory | null;
  /** Why it is off (the parameter, the kernel), for `rpi_verbose`; null while it is on. */
  reason: string | null;

  constructor(enabled: boolean) {
    this.cm = enabled ? crossMemory() : null;
    this.reason = enabled ? crossMemoryUnavailableReason() : 'rpi_sm_single_copy is 0';
  }

  get on(): boolean {
    return this.cm !== null;
  }

  /** Writes the offer for `body` (its address) after the envelope in `record`. */
  offer(record: Buffer, body: Uint8Array): void {
    record.writeDoubleLE(this.cm!.addressOf(body), ENVELOPE_BYTES);
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
