import type { Communicator, VLayout } from '@ssi/mpi';
import { peersOf, waitAll } from './p2p';
import { Tag } from './tags';

/**
 * Linear scatter (LAM's): the root sends block r of `send` to rank r. An in-place root
 * (`recv === null`) keeps its block where it is.
 */
export async function scatter(
  comm: Communicator,
  send: Uint8Array | null,
  recv: Uint8Array | null,
  root: number,
): Promise<void> {
  const c = comm.coll;
  if (c.rank !== root) {
    await c.recv(recv!, root, Tag.SCATTER);
    return;
  }
  const src = send!;
  const block = src.length / c.size;
  const slot = (r: number) => src.subarray(r * block, (r + 1) * block);
  const sends = peersOf(root, c.size).map((r) => c.isend(slot(r), r, Tag.SCATTER));
  if (recv !== null) recv.set(slot(root));
  await waitAll(sends);
}

/** Linear scatterv: rank r gets layout.counts[r] bytes from layout.displs[r] of the root's `send`. */
export async function scatterv(
  comm: Communicator,
  send: Uint8Array | null,
  layout: VLayout | null,
  recv: Uint8Array | null,
  root: number,
): Promise<void> {
  const c = comm.coll;
  if (c.rank !== root) {
    await c.recv(recv!, root, Tag.SCATTERV);
    return;
  }
  const src = send!;
  const { counts, displs } = layout!;
  const slot = (r: number) => src.subarray(displs[r]!, displs[r]! + counts[r]!);
  const sends = peersOf(root, c.size).map((r) => c.isend(slot(r), r, Tag.SCATTERV));
  if (recv !== null) recv.set(slot(root));
  await waitAll(sends);
}
