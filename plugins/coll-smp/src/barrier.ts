import type { CollComm } from '@ssi/mpi';
import type { Hierarchy } from './hierarchy';
import { Tag } from './tags';

const EMPTY = new Uint8Array(0);

/**
 * MagPIe's barrier: every rank reports to its node's leader (fan-in, on-node), the leaders run
 * their barrier (off-node), each leader releases its node (fan-out, on-node). Fan-in and fan-out
 * are empty messages on the parent's collective channel: one phase each, where a local barrier
 * would be two.
 */
export async function barrierHierarchical(h: Hierarchy, comm: CollComm): Promise<void> {
  const { loc, leaders } = h;
  const others = loc.localRanks.slice(1);
  if (!loc.isLeader) {
    const leader = loc.localRanks[0]!;
    await comm.coll.send(EMPTY, leader, Tag.BARRIER_IN);
    await comm.coll.recv(EMPTY, leader, Tag.BARRIER_OUT);
    return;
  }
  await Promise.all(others.map((r) => comm.coll.recv(EMPTY, r, Tag.BARRIER_IN)));
  await leaders!.barrier();
  await Promise.all(others.map((r) => comm.coll.send(EMPTY, r, Tag.BARRIER_OUT)));
}
