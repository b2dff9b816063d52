import type { CollComm } from '@ssi/mpi';
import { NOTHING } from './buffers';
import { Tag } from './tags';
import { realOf, virtualOf } from './virtual';

/**
 * Dissemination barrier (Hensgen, Finkel and Manber): in round k every process signals
 * rank + 2^k and waits for rank - 2^k; after ceil(log2 n) rounds everybody has heard, directly
 * or not, from everybody. Any n, no fan-in/fan-out: half the latencies of a binomial barrier.
 * Within one barrier every round hears from a different source, so back-to-back barriers match
 * in order.
 */
export async function barrierDissemination(comm: CollComm): Promise<void> {
  const c = comm.coll;
  const n = c.size;
  for (let k = 1; k < n; k *= 2) {
    await c.sendrecv(
      NOTHING,
      (c.rank + k) % n,
      Tag.BARRIER,
      NOTHING,
      (c.rank - k + n) % n,
      Tag.BARRIER,
    );
  }
}

/**
 * Recursive-doubling barrier: on a power of two, process v exchanges with v ^ 2^k in round k.
 * Other sizes first fold the extra ranks into their even neighbours (`virtual.ts`), which
 * release them at the end.
 */
export async function barrierRecursiveDoubling(comm: CollComm): Promise<void> {
  const c = comm.coll;
  if (c.size === 1) return;
  const { p, rem, v } = virtualOf(c.rank, c.size);
  if (v < 0) {
    await c.send(NOTHING, c.rank - 1, Tag.BARRIER);
    await c.recv(NOTHING, c.rank - 1, Tag.BARRIER);
    return;
  }
  const folded = c.rank < 2 * rem;
  if (folded) await c.recv(NOTHING, c.rank + 1, Tag.BARRIER);
  for (let mask = 1; mask < p; mask *= 2) {
    const partner = realOf(v ^ mask, rem);
    await c.sendrecv(NOTHING, partner, Tag.BARRIER, NOTHING, partner, Tag.BARRIER);
  }
  if (folded) await c.send(NOTHING, c.rank + 1, Tag.BARRIER);
}

/**
 * Binomial-tree barrier: every process hears from its children (rank r + 2^k below r's lowest
 * set bit), tells its parent (r minus that bit), and is released down the same tree. 2 (n - 1)
 * messages in 2 ceil(log2 n) latencies: fewer messages than dissemination's n ceil(log2 n),
 * which is what counts when processes outnumber cores.
 */
export async function barrierTree(comm: CollComm): Promise<void> {
  const c = comm.coll;
  const n = c.size;
  const r = c.rank;
  const children: number[] = [];
  const below = r === 0 ? n : r & -r;
  for (let m = 1; m < below && r + m < n; m *= 2) children.push(r + m);
  await Promise.all(children.map((child) => c.recv(NOTHING, child, Tag.BARRIER)));
  if (r !== 0) {
    await c.send(NOTHING, r - below, Tag.BARRIER);
    await c.recv(NOTHING, r - below, Tag.BARRIER_RELEASE);
  }
  await Promise.all(children.map((child) => c.send(NOTHING, child, Tag.BARRIER_RELEASE)));
}
