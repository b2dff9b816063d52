import type { CollComm, VLayout } from '@ssi/mpi';
import { peersOf, waitAll } from './p2p';
import { Tag } from './tags';

/** Where rank r's block is in the root's send buffer. */
type Slot = (rank: number) => Uint8Array;

/**
 * Linear scatter (LAM's): the root sends `slot(r)` to rank r. An in-place root (`recv === null`)
 * keeps its block where it is.
 */
async function linearScatter(
  comm: CollComm,
  slot: Slot | null,
  recv: Uint8Array | null,
  root: number,
  tag: number,
): Promise<void> {
  const c = comm.coll;
  if (c.rank !== root) {
    await c.recv(recv!, root, tag);
    return;
  }
  const sends = peersOf(root, c.size).map((r) => c.isend(slot!(r), r, tag));
  if (recv !== null) recv.set(slot!(root));
  await waitAll(sends);
}

/** Scatter: rank r gets block r (of send.length / size bytes) of the root's `send`. */
export function scatter(
  comm: CollComm,
  send: Uint8Array | null,
  recv: Uint8Array | null,
  root: number,
): Promise<void> {
  const block = send ? send.length / comm.coll.size : 0;
  const slot = send && ((r: number) => send.subarray(r * block, (r + 1) * block));
  return linearScatter(comm, slot, recv, root, Tag.SCATTER);
}

/** Scatterv: rank r gets layout.counts[r] bytes from layout.displs[r] of the root's `send`. */
export function scatterv(
  comm: CollComm,
  send: Uint8Array | null,
  layout: VLayout | null,
  recv: Uint8Array | null,
  root: number,
): Promise<void> {
  const slot =
    send &&
    layout &&
    ((r: number) => send.subarray(layout.displs[r]!, layout.displs[r]! + layout.counts[r]!));
  return linearScatter(comm, slot, recv, root, Tag.SCATTERV);
}
