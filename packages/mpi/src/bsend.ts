import { BSEND_OVERHEAD } from './constants';
import { ErrorClass, MpiError } from './errors';

const ALIGN = 8;

/**
 * The buffer attached for buffered sends (`MPI_Buffer_attach`), with the MPI rules on space:
 * every buffered message takes its packed size plus `BSEND_OVERHEAD` bytes of the attached
 * buffer until it has been transmitted; a message that does not fit is an `ERR_BUFFER` error.
 * First-fit allocation over a sorted free list, as LAM's.
 */
export class BsendBuffer {
  /** Free extents [offset, length], sorted by offset, coalesced. */
  private free: [number, number][];
  private inFlight = 0;
  private drainWaiters: (() => void)[] = [];

  constructor(readonly memory: Uint8Array) {
    this.free = memory.byteLength > 0 ? [[0, memory.byteLength]] : [];
  }

  get size(): number {
    return this.memory.byteLength;
  }

  /** Bytes a message of `length` bytes takes in the buffer. */
  static footprint(length: number): number {
    return Math.ceil((length + BSEND_OVERHEAD) / ALIGN) * ALIGN;
  }

  /** Space for one message; returns its offset or throws ERR_BUFFER. */
  allocate(length: number): number {
    const need = BsendBuffer.footprint(length);
    for (let i = 0; i < this.free.length; i++) {
      const ext = this.free[i]!;
      if (ext[1] < need) continue;
      const off = ext[0];
      if (ext[1] === need) this.free.splice(i, 1);
      else {
        ext[0] += need;
        ext[1] -= need;
      }
      this.inFlight++;
      return off;
    }
    const largest = this.free.reduce((m, e) => Math.max(m, e[1]), 0);
    throw new MpiError(
      ErrorClass.ERR_BUFFER,
      `buffered send of ${length} bytes needs ${need} bytes of attached buffer space ` +
        `(message + BSEND_OVERHEAD ${BSEND_OVERHEAD}), but the largest free space is ${largest} ` +
        `of ${this.size} bytes; attach a larger buffer (mpi.attachBuffer) or wait for earlier ` +
        `buffered sends to complete`,
    );
  }

  release(offset: number, length: number): void {
    const size = BsendBuffer.footprint(length);
    let i = 0;
    while (i < this.free.length && this.free[i]![0] < offset) i++;
    this.free.splice(i, 0, [offset, size]);
    // Coalesce with the neighbours.
    if (i + 1 < this.free.length && offset + size === this.free[i + 1]![0]) {
      this.free[i]![1] += this.free[i + 1]![1];
      this.free.splice(i + 1, 1);
    }
    if (i > 0 && this.free[i - 1]![0] + this.free[i - 1]![1] === offset) {
      this.free[i - 1]![1] += this.free[i]![1];
      this.free.splice(i, 1);
    }
    this.inFlight--;
    if (this.inFlight === 0) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** Messages still being transmitted from the buffer. */
  get pending(): number {
    return this.inFlight;
  }

  /** Resolves when every buffered message has been transmitted (detach and finalize wait). */
  drained(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }
}
