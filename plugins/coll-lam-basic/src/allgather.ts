import type { CollComm, VLayout } from '@ssi/mpi';
import { total } from './buffers';
import { gather, gatherv } from './gather';

/** The broadcast the module selected for this communicator (linear or binomial). */
export type Bcast = (comm: CollComm, buf: Uint8Array, root: number) => Promise<void>;

/**
 * Allgather as LAM does it: gather to rank 0, then broadcast the whole receive buffer with the
 * communicator's broadcast. In place (`send === null`) this rank's block already is in `recv`.
 */
export function makeAllgather(bcast: Bcast) {
  return async function allgather(
    comm: CollComm,
    send: Uint8Array | null,
    recv: Uint8Array,
  ): Promise<void> {
    const c = comm.coll;
    const block = recv.length / c.size;
    const own = send ?? recv.subarray(c.rank * block, (c.rank + 1) * block);
    // Rank 0 passes `send` through so that an in-place rank 0 stays in place.
    await gather(comm, c.rank === 0 ? send : own, c.rank === 0 ? recv : null, 0);
    await bcast(comm, recv, 0);
  };
}

/** Whether the blocks follow each other in rank order without gaps. */
function isPacked(layout: VLayout): boolean {
  const { counts, displs } = layout;
  for (let r = 1; r < counts.length; r++) {
    if (displs[r] !== displs[r - 1]! + counts[r - 1]!) return false;
  }
  return true;
}

/** Copies the blocks of `layout` out of `from` into one contiguous run, in rank order. */
function pack(from: Uint8Array, layout: VLayout): Uint8Array {
  const out = new Uint8Array(total(layout.counts));
  let at = 0;
  layout.counts.forEach((count, r) => {
    const start = layout.displs[r]!;
    out.set(from.subarray(start, start + count), at);
    at += count;
  });
  return out;
}

/** The inverse of `pack`: spreads a contiguous run over the blocks of `layout` in `into`. */
function unpack(packed: Uint8Array, into: Uint8Array, layout: VLayout): void {
  let at = 0;
  layout.counts.forEach((count, r) => {
    into.set(packed.subarray(at, at + count), layout.displs[r]!);
    at += count;
  });
}

/**
 * Allgatherv as LAM does it, gatherv to rank 0 then a broadcast. The broadcast carries only the
 * blocks: when they lie back to back it covers their span of `recv`, otherwise rank 0 packs them
 * and every process unpacks, so that bytes of `recv` between blocks are never written.
 */
export function makeAllgatherv(bcast: Bcast) {
  return async function allgatherv(
    comm: CollComm,
    send: Uint8Array | null,
    recv: Uint8Array,
    layout: VLayout,
  ): Promise<void> {
    const c = comm.coll;
    const { counts, displs } = layout;
    const own = send ?? recv.subarray(displs[c.rank]!, displs[c.rank]! + counts[c.rank]!);
    await gatherv(comm, c.rank === 0 ? send : own, c.rank === 0 ? recv : null, layout, 0);
    if (c.size === 1) return;
    if (isPacked(layout)) {
      const start = displs[0]!;
      await bcast(comm, recv.subarray(start, start + total(counts)), 0);
      return;
    }
    const packed = c.rank === 0 ? pack(recv, layout) : new Uint8Array(total(counts));
    await bcast(comm, packed, 0);
    if (c.rank !== 0) unpack(packed, recv, layout);
  };
}
