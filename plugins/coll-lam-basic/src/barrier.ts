import type { CollComm } from '@ssi/mpi';
import { peersOf, waitAll } from './p2p';
import { Tag } from './tags';
import { treeChildren, treeParent } from './trees';

/** Barrier messages carry no data; zero bytes can share one buffer. */
const NOTHING = new Uint8Array(0);

/** Linear barrier: everybody checks in with rank 0, which then releases everybody. */
export async function barrierLinear(comm: CollComm): Promise<void> {
  const c = comm.coll;
  if (c.size === 1) return;
  if (c.rank !== 0) {
    await c.send(NOTHING, 0, Tag.BARRIER);
    await c.recv(NOTHING, 0, Tag.BARRIER);
    return;
  }
  const others = peersOf(0, c.size);
  await waitAll(others.map((r) => c.irecv(NOTHING, r, Tag.BARRIER)));
  await waitAll(others.map((r) => c.isend(NOTHING, r, Tag.BARRIER)));
}

/**
 * Binomial barrier: check-ins flow up a tree rooted at rank 0 (fan-in), the release flows back
 * down (fan-out); O(log n) steps.
 */
export async function barrierTree(comm: CollComm): Promise<void> {
  const c = comm.coll;
  const size = c.size;
  if (size === 1) return;
  // Rooted at rank 0, positions are ranks.
  const children = treeChildren(c.rank, size);
  const parent = treeParent(c.rank);
  await waitAll(children.map((r) => c.irecv(NOTHING, r, Tag.BARRIER)));
  if (parent >= 0) {
    await c.send(NOTHING, parent, Tag.BARRIER);
    await c.recv(NOTHING, parent, Tag.BARRIER);
  }
  await waitAll(children.map((r) => c.isend(NOTHING, r, Tag.BARRIER)));
}
