/**
 * Intercommunicator collectives (LAM's lam_basic had none). On an intercommunicator a process
 * can only address the other group, so every algorithm goes through the two groups' rank-0
 * processes, the leaders: (1) every process sends its contribution to the remote leader, which
 * thereby holds what the leader's own group needs; (2) the two leaders swap what they hold;
 * (3) each leader hands what it received to the rest of the remote group, which is exactly what
 * that group needs. `comm.size` is the local group, `comm.remoteSize` the remote one.
 */
import type { CollChannel, CollComm, NumericArray, ReduceOp } from '@ssi/mpi';
import { PROC_NULL, similarArray } from '@ssi/mpi';
import { ranksUpTo, waitAll } from './p2p';
import { foldInOrder } from './reduce';
import { Tag } from './tags';

const NOTHING = new Uint8Array(0);

/** Sends `data` to every remote process but the leader (which already has it). */
async function handToRemoteGroup(
  c: CollChannel,
  remoteSize: number,
  data: ArrayBufferView,
  tag: number,
): Promise<void> {
  const targets = ranksUpTo(remoteSize).slice(1);
  await waitAll(targets.map((r) => c.isend(data, r, tag)));
}

/**
 * No process leaves before every process of both groups has entered: each leader learns that
 * the remote group entered (step 1), the swap tells it about its own group (step 2), and only
 * then does it release the remote group (step 3).
 */
export async function barrierInter(comm: CollComm): Promise<void> {
  const c = comm.coll;
  const remoteSize = comm.remoteSize;
  const checkIn = c.isend(NOTHING, 0, Tag.BARRIER_INTER);
  if (c.rank !== 0) {
    await checkIn.wait();
    await c.recv(NOTHING, 0, Tag.BARRIER_INTER_RELEASE);
    return;
  }
  await waitAll(ranksUpTo(remoteSize).map((r) => c.irecv(NOTHING, r, Tag.BARRIER_INTER)));
  await checkIn.wait();
  await c.sendrecv(NOTHING, 0, Tag.BARRIER_INTER_SWAP, NOTHING, 0, Tag.BARRIER_INTER_SWAP);
  await handToRemoteGroup(c, remoteSize, NOTHING, Tag.BARRIER_INTER_RELEASE);
}

/**
 * Broadcast from one process to the whole remote group: `root` is ROOT at the root, PROC_NULL in
 * the rest of its group, and the root's rank in the remote group at the receivers.
 */
export async function bcastInter(comm: CollComm, buf: Uint8Array, root: number): Promise<void> {
  const c = comm.coll;
  if (root === PROC_NULL) return;
  if (root >= 0) {
    await c.recv(buf, root, Tag.BCAST_INTER);
    return;
  }
  // The MPI layer has checked the root: a negative value other than PROC_NULL is ROOT.
  await waitAll(ranksUpTo(comm.remoteSize).map((r) => c.isend(buf, r, Tag.BCAST_INTER)));
}

/** Every process gets the reduction, in rank order, of the remote group's operands. */
export async function allreduceInter(
  comm: CollComm,
  send: NumericArray,
  recv: NumericArray,
  op: ReduceOp,
): Promise<void> {
  const c = comm.coll;
  const remoteSize = comm.remoteSize;
  const contribution = c.isend(send, 0, Tag.ALLREDUCE_INTER);
  if (c.rank !== 0) {
    await contribution.wait();
    await c.recv(recv, 0, Tag.ALLREDUCE_INTER_RESULT);
    return;
  }
  await foldInOrder(comm, ranksUpTo(remoteSize), recv, op, Tag.ALLREDUCE_INTER);
  await contribution.wait();
  const forRemote = similarArray(recv);
  const tag = Tag.ALLREDUCE_INTER_SWAP;
  await c.sendrecv(recv, 0, tag, forRemote, 0, tag);
  await handToRemoteGroup(c, remoteSize, forRemote, Tag.ALLREDUCE_INTER_RESULT);
}

/**
 * Every process gets the remote group's blocks in rank order (`recv` holds remoteSize blocks;
 * the two groups' block sizes may differ).
 */
export async function allgatherInter(
  comm: CollComm,
  send: Uint8Array,
  recv: Uint8Array,
): Promise<void> {
  const c = comm.coll;
  const remoteSize = comm.remoteSize;
  const contribution = c.isend(send, 0, Tag.ALLGATHER_INTER);
  if (c.rank !== 0) {
    await contribution.wait();
    await c.recv(recv, 0, Tag.ALLGATHER_INTER_RESULT);
    return;
  }
  const block = recv.length / remoteSize;
  const slot = (r: number) => recv.subarray(r * block, (r + 1) * block);
  await waitAll(ranksUpTo(remoteSize).map((r) => c.irecv(slot(r), r, Tag.ALLGATHER_INTER)));
  await contribution.wait();
  // What the remote group needs: this group's blocks, one per local process.
  const forRemote = new Uint8Array(comm.size * send.length);
  const tag = Tag.ALLGATHER_INTER_SWAP;
  await c.sendrecv(recv, 0, tag, forRemote, 0, tag);
  await handToRemoteGroup(c, remoteSize, forRemote, Tag.ALLGATHER_INTER_RESULT);
}
