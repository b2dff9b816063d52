import type { CollComm, NumericArray, ReduceOp } from '@ssi/mpi';
import { AreaFlow, issued, othersThan, pieceCount } from './area-flow';
import { bytesOf, keptLike, sameKind } from './buffers';
import type { Hierarchy } from './hierarchy';
import { leadersAllreduce } from './leaders-allreduce';
import { beginLeadersReduce } from './leaders-reduce';
import type { NodeArea } from './node-area';
import { Tag } from './tags';

/*
 * reduce and allreduce through the nodes' shared areas, in pieces of the area's slot size. The
 * area holds two sets of one slot per rank of the node (set = piece index mod 2). Per piece:
 * every other rank of the node copies its operand piece into its slot of the set and tells the
 * leader (AREA_IN); the leader combines its own operand and the slots, in node rank order, into
 * its result piece, and the piece goes off-node (leaders' reduce or allreduce) while the node
 * already fills the other set. A rank writes piece i + 2 into a set only after the leader said
 * it is done with piece i there (AREA_READY), so two pieces are in flight per node.
 */

/** The typed view of `like`'s element type on slot (`set`, `rank`) of `area`, `length` elements. */
function slotOf(area: NodeArea, like: NumericArray, set: number, rank: number, length: number) {
  const bytes = area.setSlot(set, rank, length * like.BYTES_PER_ELEMENT);
  const Ctor = like.constructor as new (b: ArrayBufferLike, at: number, n: number) => NumericArray;
  return new Ctor(bytes.buffer, bytes.byteOffset, length);
}

/** Piece `i` of `a` when cut into pieces of `per` elements. */
function pieceOf(a: NumericArray, i: number, per: number): NumericArray {
  return a.subarray(i * per, Math.min(a.length, (i + 1) * per)) as NumericArray;
}

/** The leader's combination of piece `i`: `out` = own operand, then every slot in rank order. */
function combine(
  area: NodeArea,
  op: ReduceOp,
  own: NumericArray,
  out: NumericArray,
  set: number,
  k: number,
) {
  if (k === 1) {
    if (own !== out) out.set(own as never);
    return;
  }
  op.apply(own, slotOf(area, out, set, 1, out.length), out);
  for (let r = 2; r < k; r++) op.apply(out, slotOf(area, out, set, r, out.length), out);
}

/**
 * What every rank but the leader does: writes its operand pieces into its slots, two ahead, and
 * (allreduce) copies each result piece out of the leader's slot when told.
 */
async function feedLeader(
  area: NodeArea,
  flow: AreaFlow,
  rank: number,
  operand: NumericArray,
  result: NumericArray | null,
  per: number,
): Promise<void> {
  const pieces = pieceCount(operand.length, per);
  const put = (i: number) => {
    const p = pieceOf(operand, i, per);
    slotOf(area, operand, i % 2, rank, p.length).set(p as never);
    flow.tell([0], Tag.AREA_IN);
  };
  put(0);
  for (let i = 0; i < pieces; i++) {
    if (i + 1 < pieces) put(i + 1);
    await flow.hear([0], Tag.AREA_READY);
    if (result) {
      const p = pieceOf(result, i, per);
      p.set(slotOf(area, result, i % 2, 0, p.length) as never);
    }
  }
}

/** Elements per piece: the slot size in elements of `a`'s type. */
const perPiece = (area: NodeArea, a: NumericArray) => area.shape.chunk / a.BYTES_PER_ELEMENT;

/**
 * allreduce: the node's operands meet in the leader piece by piece, the leaders allreduce each
 * piece (recursive doubling where it can: one exchange on two nodes), and the leader puts each
 * result piece into its slot for the node to copy out. No signal is needed after the result:
 * a rank writes its next operand (this call's piece i + 2, or the next call's first) only after
 * it copied result i out, and the leader overwrites result slot i only after that operand came.
 */
export async function allreduceThroughArea(
  h: Hierarchy,
  area: NodeArea,
  send: NumericArray | null,
  recv: NumericArray,
  op: ReduceOp,
): Promise<void> {
  const { local, leaders } = h;
  const k = local.size;
  const own = send ?? recv;
  const per = perPiece(area, recv);
  const flow = new AreaFlow(local);
  if (local.rank !== 0) {
    await feedLeader(area, flow, local.rank, own, recv, per);
    await flow.drained();
    return;
  }
  const readers = othersThan(k, 0);
  const pieces = pieceCount(recv.length, per);
  let published: Promise<unknown> = Promise.resolve();
  for (let i = 0; i < pieces; i++) {
    const out = pieceOf(recv, i, per);
    if (k > 1) await flow.hear(readers, Tag.AREA_IN);
    combine(area, op, pieceOf(own, i, per), out, i % 2, k);
    // The leader's own slot of the set takes the other leaders' operands: it is free until this
    // piece's result goes there.
    const scratch = k > 1 ? slotOf(area, out, i % 2, 0, out.length) : undefined;
    const crossed = leaders ? issued(leadersAllreduce(leaders, out, op, scratch)) : null;
    published = issued(
      Promise.all([published, crossed]).then(() => {
        if (k === 1) return;
        slotOf(area, out, i % 2, 0, out.length).set(out as never);
        flow.tell(readers, Tag.AREA_READY);
      }),
    );
  }
  await published;
  await flow.drained();
}

/**
 * reduce: the node's operands meet in the leader piece by piece (into `recv` at the root, else
 * into a scratch array), the leaders reduce each piece to comm rank 0 (node 0's leader), which
 * hands the whole result to the root when the root is another rank; a root that is not rank 0
 * receives it in `reduce-up.ts`, after the verdict on the lengths.
 */
export async function reduceThroughArea(
  h: Hierarchy,
  comm: CollComm,
  area: NodeArea,
  send: NumericArray | null,
  recv: NumericArray | null,
  op: ReduceOp,
  root: number,
): Promise<void> {
  const { loc, local, leaders } = h;
  const k = local.size;
  const isRoot = comm.rank === root;
  const own = (send ?? recv)!;
  const per = perPiece(area, own);
  const flow = new AreaFlow(local);
  // The leaders' tree ends at node 0's leader, comm rank 0 (`reduceTreeAtZero`).
  const top = loc.node === 0;
  if (local.rank !== 0) {
    await feedLeader(area, flow, local.rank, own, null, per);
    // A root that is not the leader receives the result in `reduce-up.ts`, after the verdict.
    await flow.drained();
    return;
  }
  const readers = othersThan(k, 0);
  const pieces = pieceCount(own.length, per);
  // The partial result: in `recv` at the root; else in the leader's own slots (each written once
  // the previous piece of that set has crossed), or a new array at rank 0 when it is not the root
  // (it must hold the whole result to hand it on) or when the node has one rank (its operand
  // must stay as it is).
  const inSlots = !isRoot && k > 1 && !top;
  const partial = isRoot ? recv! : inSlots ? null : sameKind(own);
  const crossings: Promise<unknown>[] = [];
  for (let i = 0; i < pieces; i++) {
    const length = Math.min(own.length, (i + 1) * per) - i * per;
    if (leaders && i >= 2) await crossings[i - 2];
    const mySlot = () => slotOf(area, own, i % 2, 0, length);
    const out = partial ? pieceOf(partial, i, per) : mySlot();
    // A child's partial lands in a kept array: the slots may still be read by ranks leaving the
    // previous call (they have not said AREA_IN for this one yet when the receive is posted).
    const tree = leaders ? beginLeadersReduce(leaders, () => keptLike(h, out, i % 2)) : null;
    if (k > 1) await flow.hear(readers, Tag.AREA_IN);
    combine(area, op, pieceOf(own, i, per), out, i % 2, k);
    if (k > 1) flow.tell(readers, Tag.AREA_READY);
    if (tree) crossings.push(issued(tree.finish(out, op)));
  }
  await Promise.all(crossings);
  await flow.drained();
  if (top && !isRoot) {
    await comm.coll.send(bytesOf(partial!), root, Tag.REDUCE_RESULT);
  }
}
