import type { CollComm, VLayout } from '@ssi/mpi';
import { peersOf, waitAll } from './p2p';
import { Tag } from './tags';

/**
 * Pairwise exchange with every peer at once (LAM's linear alltoall): all receives are posted,
 * then all sends, then everything is awaited, so no ordering between peers can deadlock.
 */
async function exchange(
  comm: CollComm,
  blockFor: (peer: number) => Uint8Array,
  slotFrom: (peer: number) => Uint8Array,
  tag: number,
): Promise<void> {
  const c = comm.coll;
  const peers = peersOf(c.rank, c.size);
  const receives = peers.map((r) => c.irecv(slotFrom(r), r, tag));
  const sends = peers.map((r) => c.isend(blockFor(r), r, tag));
  slotFrom(c.rank).set(blockFor(c.rank));
  await waitAll([...receives, ...sends]);
}

/** Block i of `send` goes to rank i; block i of `recv` comes from rank i. */
export async function alltoall(
  comm: CollComm,
  send: Uint8Array | null,
  recv: Uint8Array,
): Promise<void> {
  const block = recv.length / comm.size;
  // In place, the blocks to send are read from a copy: `recv` is being overwritten.
  const src = send ?? recv.slice();
  await exchange(
    comm,
    (r) => src.subarray(r * block, (r + 1) * block),
    (r) => recv.subarray(r * block, (r + 1) * block),
    Tag.ALLTOALL,
  );
}

function slotOf(buf: Uint8Array, layout: VLayout, r: number): Uint8Array {
  return buf.subarray(layout.displs[r]!, layout.displs[r]! + layout.counts[r]!);
}

/** Alltoall with per-peer byte counts and displacements; in place the receive layout serves both. */
export async function alltoallv(
  comm: CollComm,
  send: Uint8Array | null,
  sendLayout: VLayout,
  recv: Uint8Array,
  recvLayout: VLayout,
): Promise<void> {
  const src = send ?? recv.slice();
  const srcLayout = send === null ? recvLayout : sendLayout;
  await exchange(
    comm,
    (r) => slotOf(src, srcLayout, r),
    (r) => slotOf(recv, recvLayout, r),
    Tag.ALLTOALLV,
  );
}

/** Alltoall with a separate buffer per peer in each direction. */
export async function alltoallw(
  comm: CollComm,
  send: readonly Uint8Array[],
  recv: readonly Uint8Array[],
): Promise<void> {
  await exchange(
    comm,
    (r) => send[r]!,
    (r) => recv[r]!,
    Tag.ALLTOALLW,
  );
}
