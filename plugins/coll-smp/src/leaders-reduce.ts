import type { CollComm, CollRequest, NumericArray, ReduceOp } from '@ssi/mpi';
import { reduceTreeAtZero } from './binomial';
import { bytesOf, sameKind } from './buffers';
import { Tag } from './tags';

/**
 * The leaders' half of smp's reduce, for commutative operators: a tree to leader 0
 * (`reduceTreeAtZero`) whose receives are posted before the leader has its own operand. `begin` posts them
 * (call it before combining the node's operands), `finish` combines what arrives into `partial`
 * and sends the result up the tree. Posting early lets a child's partial cross the network while
 * this leader still combines its node, and it lands in a posted buffer instead of being held as
 * unexpected. `scratch()` (same type and length as the piece) takes the first child's operand;
 * further children (more than two nodes) get new arrays.
 */
export function beginLeadersReduce(leaders: CollComm, scratch: () => NumericArray): LeadersReduce {
  const { parent, children: from } = reduceTreeAtZero(leaders.rank, leaders.size);
  const children: { buf: NumericArray; req: CollRequest }[] = [];
  for (const r of from) {
    const buf = children.length === 0 ? scratch() : sameKind(children[0]!.buf);
    children.push({ buf, req: leaders.coll.irecv(bytesOf(buf), r, Tag.LEADERS_REDUCE) });
  }
  return {
    async finish(partial: NumericArray, op: ReduceOp): Promise<void> {
      for (const child of children) {
        await child.req.wait();
        op.apply(partial, child.buf, partial);
      }
      if (parent >= 0) await leaders.coll.send(bytesOf(partial), parent, Tag.LEADERS_REDUCE);
    },
  };
}

export interface LeadersReduce {
  finish(partial: NumericArray, op: ReduceOp): Promise<void>;
}
