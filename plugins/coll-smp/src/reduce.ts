import type { CollComm, NumericArray, ReduceOp } from '@ssi/mpi';
import { IN_PLACE } from '@ssi/mpi';
import { bytesOf, copyInto, sameKind } from './buffers';
import type { Hierarchy } from './hierarchy';
import { leadersAllreduce } from './leaders-allreduce';
import { Tag } from './tags';

/**
 * MagPIe's reduce: each node reduces to its leader (on-node), the leaders reduce to the root's
 * node leader (off-node, once per node), which hands the result to the root when the root is not
 * itself the leader. Operands are combined node by node, so only operators whose order does not
 * matter may come here (`actions.ts` sends the others to lam_basic). `send === null` is
 * IN_PLACE at the root: its operand is in `recv`.
 */
export async function reduceHierarchical(
  h: Hierarchy,
  comm: CollComm,
  send: NumericArray | null,
  recv: NumericArray | null,
  op: ReduceOp,
  root: number,
): Promise<void> {
  const { loc, local, leaders } = h;
  const isRoot = comm.rank === root;
  const operand = (send ?? recv)!;
  const rootNode = loc.nodeOf(root);

  // On-node: the leader's partial result (the operand itself on a one-rank node).
  let partial = operand;
  if (local.size > 1) {
    if (!loc.isLeader) await local.reduce(operand, op, 0);
    else {
      partial = isRoot ? recv! : sameKind(operand);
      await local.reduce(send === null && isRoot ? IN_PLACE : operand, op, 0, partial);
    }
  }

  // Off-node: leaders only.
  if (leaders) {
    if (loc.node !== rootNode) await leaders.reduce(partial, op, rootNode);
    else if (isRoot)
      await leaders.reduce(partial === recv ? IN_PLACE : partial, op, rootNode, recv!);
    else {
      // The root is another rank of this node: reduce into the scratch partial, then hand it on.
      await leaders.reduce(IN_PLACE, op, rootNode, partial);
      await comm.coll.send(bytesOf(partial), root, Tag.REDUCE_RESULT);
    }
  }
  if (isRoot && !loc.isLeader) {
    await comm.coll.recv(bytesOf(recv!), loc.localRanks[0]!, Tag.REDUCE_RESULT);
  }
}

/**
 * MagPIe's allreduce: the on-node reduction to each leader, an allreduce among the leaders, a
 * broadcast on each node. The result is built in `recv` (the leader reduces straight into it).
 */
export async function allreduceHierarchical(
  h: Hierarchy,
  send: NumericArray | null,
  recv: NumericArray,
  op: ReduceOp,
): Promise<void> {
  const { loc, local, leaders } = h;
  if (local.size > 1) {
    if (loc.isLeader) await local.reduce(send === null ? IN_PLACE : send, op, 0, recv);
    else await local.reduce(send ?? recv, op, 0);
  } else if (send !== null) copyInto(recv, send);
  if (leaders) await leadersAllreduce(leaders, recv, op);
  if (local.size > 1) await local.bcast(recv, 0);
}
