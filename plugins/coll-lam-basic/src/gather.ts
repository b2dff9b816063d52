import type { CollComm, VLayout } from '@ssi/mpi';
import { peersOf, waitAll } from './p2p';
import { Tag } from './tags';

/** Where rank r's block goes in the root's receive buffer. */
type Slot = (rank: number) => Uint8Array;

/**
 * Linear gather (LAM's): every process sends its block to the root, which receives rank r's
 * block into `slot(r)`. With `send === null` at the root (in place) its block is already there.
 */
async function linearGather(
  comm: CollComm,
  send: Uint8Array | null,
  slot: Slot | null,
  root: number,
  tag: number,
): Promise<void> {
  const c = comm.coll;
  if (c.rank !== root) {
    await c.send(send!, root, tag);
    return;
  }
  const mine = slot!(root);
  if (send !== null) mine.set(send.subarray(0, mine.length));
  await waitAll(peersOf(root, c.size).map((r) => c.irecv(slot!(r), r, tag)));
}

/** Gather: block r lands at r * blockLength of the root's `recv`. */
export function gather(
  comm: CollComm,
  send: Uint8Array | null,
  recv: Uint8Array | null,
  root: number,
): Promise<void> {
  const block = recv ? recv.length / comm.coll.size : 0;
  const slot = recv && ((r: number) => recv.subarray(r * block, (r + 1) * block));
  return linearGather(comm, send, slot, root, Tag.GATHER);
}

/** Gatherv: block r lands at layout.displs[r], layout.counts[r] bytes long. */
export function gatherv(
  comm: CollComm,
  send: Uint8Array | null,
  recv: Uint8Array | null,
  layout: VLayout | null,
  root: number,
): Promise<void> {
  const slot =
    recv &&
    layout &&
    ((r: number) => recv.subarray(layout.displs[r]!, layout.displs[r]! + layout.counts[r]!));
  return linearGather(comm, send, slot, root, Tag.GATHERV);
}
