import type { CollComm } from '@ssi/mpi';
import { peersOf, waitAll } from './p2p';
import { Tag } from './tags';
import { positionOf, rankAt, treeChildren, treeParent } from './trees';

/** Linear broadcast: the root sends to every other process. */
export async function bcastLinear(comm: CollComm, buf: Uint8Array, root: number): Promise<void> {
  const c = comm.coll;
  if (c.size === 1) return;
  if (c.rank === root) {
    await waitAll(peersOf(root, c.size).map((r) => c.isend(buf, r, Tag.BCAST)));
  } else {
    await c.recv(buf, root, Tag.BCAST);
  }
}

/**
 * Binomial broadcast: each process receives from its parent, then sends to its children, the
 * one with the largest subtree first so that the deepest branch starts earliest.
 */
export async function bcastTree(comm: CollComm, buf: Uint8Array, root: number): Promise<void> {
  const c = comm.coll;
  const size = c.size;
  if (size === 1) return;
  const me = positionOf(c.rank, root, size);
  const parent = treeParent(me);
  if (parent >= 0) await c.recv(buf, rankAt(parent, root, size), Tag.BCAST);
  const children = treeChildren(me, size).reverse();
  await waitAll(children.map((p) => c.isend(buf, rankAt(p, root, size), Tag.BCAST)));
}
