import type { CollComm } from '@ssi/mpi';
import type { Hierarchy } from './hierarchy';
import { isPowerOfTwo } from './leaders-allreduce';
import { takesDoubling } from './reduction-exchange';
import { Tag } from './tags';

const EMPTY = new Uint8Array(0);

/**
 * MagPIe's barrier: every rank reports to its node's leader (fan-in, on-node), the leaders run
 * their barrier (off-node), each leader releases its node (fan-out, on-node). Fan-in and fan-out
 * are empty messages on the parent's collective channel: one phase each, where a local barrier
 * would be two. The leaders' barrier is a pairwise exchange (one hop on two nodes) on a power of
 * two leaders. Where a pairwise exchange over the whole communicator takes fewer hops than the
 * levels (2 + 2 ranks: two against three) and no node has fewer CPUs than ranks, it runs that
 * instead (`takesDoubling`).
 */
export async function barrierHierarchical(h: Hierarchy, comm: CollComm): Promise<void> {
  const { loc, leaders } = h;
  if (takesDoubling(h, comm.size)) {
    await exchangeBarrier(comm);
    return;
  }
  const others = loc.localRanks.slice(1);
  if (!loc.isLeader) {
    const leader = loc.localRanks[0]!;
    await comm.coll.send(EMPTY, leader, Tag.BARRIER_IN);
    await comm.coll.recv(EMPTY, leader, Tag.BARRIER_OUT);
    return;
  }
  await Promise.all(others.map((r) => comm.coll.recv(EMPTY, r, Tag.BARRIER_IN)));
  if (isPowerOfTwo(leaders!.size)) await exchangeBarrier(leaders!);
  else await leaders!.barrier();
  await Promise.all(others.map((r) => comm.coll.send(EMPTY, r, Tag.BARRIER_OUT)));
}

/**
 * A barrier by pairwise exchange of empty messages on a power-of-two communicator: in step s
 * every rank trades with rank ^ 2^s, so after log2(size) steps each has heard, directly or not,
 * from every rank.
 */
async function exchangeBarrier(c: CollComm): Promise<void> {
  for (let d = 1; d < c.size; d *= 2) {
    const partner = c.rank ^ d;
    await c.coll.sendrecv(EMPTY, partner, Tag.BARRIER_PAIR, EMPTY, partner, Tag.BARRIER_PAIR);
  }
}
