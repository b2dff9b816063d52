import type { Communicator, VLayout } from '@ssi/mpi';
import { peersOf, waitAll } from './p2p';
import { Tag } from './tags';

/**
 * Linear gather (LAM's): every process sends its block to the root, which receives block r at
 * r * blockLength. With `send === null` at the root (in place) its block is already there.
 */
export async function gather(
  comm: Communicator,
  send: Uint8Array | null,
  recv: Uint8Array | null,
  root: number,
): Promise<void> {
  const c = comm.coll;
  if (c.rank !== root) {
    await c.send(send!, root, Tag.GATHER);
    return;
  }
  const out = recv!;
  const block = out.length / c.size;
  if (send !== null) out.set(send, root * block);
  const slot = (r: number) => out.subarray(r * block, (r + 1) * block);
  await waitAll(peersOf(root, c.size).map((r) => c.irecv(slot(r), r, Tag.GATHER)));
}

/** Linear gatherv: block r lands at layout.displs[r], layout.counts[r] bytes long. */
export async function gatherv(
  comm: Communicator,
  send: Uint8Array | null,
  recv: Uint8Array | null,
  layout: VLayout | null,
  root: number,
): Promise<void> {
  const c = comm.coll;
  if (c.rank !== root) {
    await c.send(send!, root, Tag.GATHERV);
    return;
  }
  const out = recv!;
  const { counts, displs } = layout!;
  const slot = (r: number) => out.subarray(displs[r]!, displs[r]! + counts[r]!);
  if (send !== null) out.set(send.subarray(0, counts[root]!), displs[root]!);
  await waitAll(peersOf(root, c.size).map((r) => c.irecv(slot(r), r, Tag.GATHERV)));
}
