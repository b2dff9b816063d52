import type { CollComm } from '@ssi/mpi';
import { bcastBinomial } from './bcast';
import { blockOf } from './buffers';
import { Tag } from './tags';

/** Puts this rank's block in place (unless it already is: MPI_IN_PLACE). */
function placeOwn(comm: CollComm, send: Uint8Array | null, recv: Uint8Array): void {
  if (send !== null) blockOf(recv, comm.coll.rank, comm.coll.size).set(send);
}

/**
 * Recursive-doubling allgather (power-of-two sizes only; `actions.ts` uses the ring otherwise):
 * in round k, rank r swaps the 2^k blocks it has, an aligned run, with r ^ 2^k. log2(n)
 * latencies.
 */
export async function allgatherRecursiveDoubling(
  comm: CollComm,
  send: Uint8Array | null,
  recv: Uint8Array,
): Promise<void> {
  placeOwn(comm, send, recv);
  const c = comm.coll;
  const block = recv.length / c.size;
  const run = (first: number, blocks: number) =>
    recv.subarray(first * block, (first + blocks) * block);
  for (let mask = 1; mask < c.size; mask *= 2) {
    const peer = c.rank ^ mask;
    const mine = c.rank & ~(mask - 1);
    const theirs = peer & ~(mask - 1);
    await c.sendrecv(run(mine, mask), peer, Tag.ALLGATHER, run(theirs, mask), peer, Tag.ALLGATHER);
  }
}

/**
 * Ring allgather, any n: in step s every rank passes the block it received in step s - 1 to its
 * right neighbour. n - 1 latencies, each link carries every block once: best for large blocks.
 */
export async function allgatherRing(
  comm: CollComm,
  send: Uint8Array | null,
  recv: Uint8Array,
): Promise<void> {
  placeOwn(comm, send, recv);
  const c = comm.coll;
  const n = c.size;
  const right = (c.rank + 1) % n;
  const left = (c.rank - 1 + n) % n;
  for (let s = 0; s < n - 1; s++) {
    const out = (c.rank - s + n) % n;
    const into = (c.rank - s - 1 + n) % n;
    await c.sendrecv(
      blockOf(recv, out, n),
      right,
      Tag.ALLGATHER,
      blockOf(recv, into, n),
      left,
      Tag.ALLGATHER,
    );
  }
}

/**
 * Bruck's allgather, any n: rank r collects blocks r, r + 1, ... in a scratch buffer; in round k
 * it sends the first min(2^k, n - 2^k) blocks it has to r - 2^k and appends as many from
 * r + 2^k. ceil(log2 n) latencies on every size (recursive doubling needs a power of two); one
 * rotation into place at the end.
 */
export async function allgatherBruck(
  comm: CollComm,
  send: Uint8Array | null,
  recv: Uint8Array,
): Promise<void> {
  const c = comm.coll;
  const n = c.size;
  const block = recv.length / n;
  const own = send ?? blockOf(recv, c.rank, n);
  if (n === 1) {
    placeOwn(comm, send, recv);
    return;
  }
  const have = new Uint8Array(recv.length);
  have.set(own);
  for (let dist = 1; dist < n; dist *= 2) {
    const count = Math.min(dist, n - dist) * block;
    await c.sendrecv(
      have.subarray(0, count),
      (c.rank - dist + n) % n,
      Tag.ALLGATHER,
      have.subarray(dist * block, dist * block + count),
      (c.rank + dist) % n,
      Tag.ALLGATHER,
    );
  }
  // have[i] is rank r + i's block.
  const split = (n - c.rank) * block;
  recv.set(have.subarray(0, split), c.rank * block);
  recv.set(have.subarray(split), 0);
}

/**
 * Gather + bcast, for crowded nodes: every rank sends its block straight to rank 0 (a linear
 * gather: one latency, where a binomial gather takes log2 n for the same n - 1 messages;
 * measured 1.06-1.28 x lam_basic's linear gather + bcast at 1 KiB on 8 ranks of 2 cores with
 * the binomial one), then the binomial bcast of the whole. 2 (n - 1) messages in
 * 1 + ceil(log2 n) latencies, where recursive doubling and Bruck send n log2 n: the better trade
 * when processes outnumber cores.
 */
export async function allgatherGatherBcast(
  comm: CollComm,
  send: Uint8Array | null,
  recv: Uint8Array,
): Promise<void> {
  placeOwn(comm, send, recv);
  const c = comm.coll;
  const n = c.size;
  if (n === 1) return;
  const block = recv.length / n;
  const blockOf = (r: number) => recv.subarray(r * block, (r + 1) * block);
  if (c.rank === 0) {
    const arrivals = [];
    for (let r = 1; r < n; r++) arrivals.push(c.irecv(blockOf(r), r, Tag.ALLGATHER).wait());
    await Promise.all(arrivals);
  } else {
    await c.send(blockOf(c.rank), 0, Tag.ALLGATHER);
  }
  await bcastBinomial(comm, recv, 0);
}
