import { ShmError } from './errors';
import type { Layout } from './layout';
import type { PoolLock } from './lock';

/**
 * The pool for large messages (LAM's third area): `poolBlocks` blocks of `poolBlock` bytes with a
 * block table in front. table[i] = 0: block i is free; n > 0: an allocation of n blocks starts
 * at i; -1: block i continues an allocation. Allocation is first-fit: it reuses the lowest free
 * blocks, which are the ones most likely still in cache (measured: next-fit over a 32 MiB pool ran
 * the 1 MiB ping-pong ~15% slower, every chunk landing in cold memory).
 *
 * The table is read and written only while holding the pool lock (plain accesses; the lock's
 * sequentially consistent CAS on acquire and release order them between processes). The *data* in
 * an allocated block is written by its sender after alloc() returned and read by its receiver
 * before free(): those accesses are ordered by the postbox that carries the block's offset
 * (see ring.ts) and by the lock (free happens under it, after the receiver's reads; the next
 * alloc of the block happens under it too, before the next sender's writes).
 */
export class SharedPool {
  private readonly table: Int32Array;

  constructor(
    mem: { readonly buffer: ArrayBufferLike },
    readonly layout: Layout,
    readonly lock: PoolLock,
  ) {
    this.table = new Int32Array(mem.buffer, layout.tableOffset, layout.poolBlocks);
  }

  /** Bytes of one block. */
  get blockSize(): number {
    return this.layout.poolBlock;
  }

  get size(): number {
    return this.layout.poolBlocks * this.layout.poolBlock;
  }

  /**
   * Allocate room for `bytes` (rounded up to blocks). Returns the byte offset in the segment, or
   * -1 when no run of free blocks is large enough now (retry after a free).
   */
  async alloc(bytes: number): Promise<number> {
    const n = this.blocksFor(bytes);
    return this.lock.run(() => this.allocLocked(n));
  }

  /** Like alloc() but only when the lock is free right now; null = the lock was busy. */
  tryAlloc(bytes: number): number | null {
    const n = this.blocksFor(bytes);
    if (!this.lock.tryAcquire()) return null;
    try {
      return this.allocLocked(n);
    } finally {
      this.lock.release();
    }
  }

  /** Return allocations (offsets from alloc) to the pool, under one lock acquisition. */
  async free(offsets: number[]): Promise<void> {
    if (offsets.length === 0) return;
    await this.lock.run(() => {
      for (const off of offsets) this.freeLocked(off);
    });
  }

  /** Free allocations while the caller holds the lock (see tryAcquire). */
  freeLockedMany(offsets: number[]): void {
    for (const off of offsets) this.freeLocked(off);
  }

  /** Free blocks now (a snapshot; for tests and diagnostics). */
  freeBlocks(): number {
    let f = 0;
    for (let i = 0; i < this.table.length; i++) if (this.table[i] === 0) f++;
    return f;
  }

  private blocksFor(bytes: number): number {
    if (!Number.isInteger(bytes) || bytes <= 0 || bytes > this.size) {
      throw new ShmError(
        'BAD_ARGS',
        `pool allocation of ${bytes} bytes: must be from 1 to the pool size (${this.size} bytes)`,
      );
    }
    return Math.ceil(bytes / this.layout.poolBlock);
  }

  private allocLocked(n: number): number {
    const total = this.table.length;
    const i = this.findRun(0, total, n);
    if (i < 0) return -1;
    this.table[i] = n;
    for (let k = 1; k < n; k++) this.table[i + k] = -1;
    return this.layout.poolOffset + i * this.layout.poolBlock;
  }

  private findRun(from: number, stop: number, n: number): number {
    const t = this.table;
    let i = from;
    while (i + n <= stop) {
      const v = t[i]!;
      if (v > 0) {
        i += v;
      } else if (v < 0) {
        i++;
      } else {
        let run = 1;
        while (run < n && t[i + run] === 0) run++;
        if (run === n) return i;
        i += run;
      }
    }
    return -1;
  }

  private freeLocked(offset: number): void {
    const rel = offset - this.layout.poolOffset;
    const i = rel / this.layout.poolBlock;
    const n = this.table[i];
    if (!Number.isInteger(i) || i < 0 || i >= this.table.length || n === undefined || n <= 0) {
      throw new ShmError(
        'BROKEN',
        `pool free of offset ${offset}: not the start of an allocation (table says ${String(n)}); the pool is corrupted`,
      );
    }
    for (let k = 0; k < n; k++) this.table[i + k] = 0;
  }
}
