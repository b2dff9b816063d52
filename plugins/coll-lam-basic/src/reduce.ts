import type { CollComm, NumericArray, ReduceOp } from '@ssi/mpi';
import { copyOfArray, similarArray } from '@ssi/mpi';
import { ranksUpTo } from './p2p';
import { Tag } from './tags';
import { treeChildren, treeParent } from './trees';

/** An operand of a fold: a local array, or the rank to receive it from. */
export type Operand = NumericArray | number;

interface Pending {
  ready: Promise<unknown>;
  data: NumericArray;
}

/**
 * out = x0 op x1 op ... op x(n-1), strictly in the order given (Ch. 6.3.2: the same result run
 * after run). Remote operands are received on `tag`; while one is combined the next is already
 * being received, through two spare buffers that alternate. The first operand is received
 * straight into `out`; a later operand that is `out` itself is copied before `out` changes.
 */
export async function foldInOrder(
  comm: CollComm,
  operands: readonly Operand[],
  out: NumericArray,
  op: ReduceOp,
  tag: number,
): Promise<void> {
  const c = comm.coll;
  const list = operands.map((x, i) => (i > 0 && x === out ? copyOfArray(out) : x));
  const spares: (NumericArray | undefined)[] = [undefined, undefined];
  let turn = 0;
  const fetch = (x: Operand): Pending => {
    if (typeof x !== 'number') return { ready: Promise.resolve(), data: x };
    spares[turn] ??= similarArray(out);
    const data = spares[turn]!;
    turn ^= 1;
    return { ready: c.irecv(data, x, tag).wait(), data };
  };
  const first = list[0]!;
  const firstReady = typeof first === 'number' ? c.irecv(out, first, tag).wait() : null;
  if (typeof first !== 'number' && first !== out) out.set(first as never);
  let current = list.length > 1 ? fetch(list[1]!) : null;
  await firstReady;
  for (let i = 1; i < list.length; i++) {
    const pending = current!;
    await pending.ready;
    current = i + 1 < list.length ? fetch(list[i + 1]!) : null;
    op.apply(out, pending.data, out);
  }
}

/**
 * Linear reduce (LAM's): the root receives every operand and folds them in rank order. In place
 * (`send === null` at the root) the root's operand is in `recv`.
 */
export async function reduceLinear(
  comm: CollComm,
  send: NumericArray | null,
  recv: NumericArray | null,
  op: ReduceOp,
  root: number,
): Promise<void> {
  const c = comm.coll;
  if (c.rank !== root) {
    await c.send(send!, root, Tag.REDUCE);
    return;
  }
  const out = recv!;
  const operands: Operand[] = ranksUpTo(c.size);
  operands[root] = send ?? out;
  await foldInOrder(comm, operands, out, op, Tag.REDUCE);
}

/**
 * Binomial reduce over the contiguous ranks [lo, hi), rooted at lo: this process folds its own
 * operand with its children's partial results (consecutive rank ranges after it, in order) and
 * sends the result to its parent. Returns the partial result of this process's subtree, which
 * at lo is the reduction of the whole range: `own` for a leaf, else the array `makeInto` gave.
 */
async function reduceRange(
  comm: CollComm,
  lo: number,
  hi: number,
  own: NumericArray,
  makeInto: () => NumericArray,
  op: ReduceOp,
): Promise<NumericArray> {
  const c = comm.coll;
  const me = c.rank - lo;
  const children = treeChildren(me, hi - lo).map((p) => lo + p);
  let partial = own;
  if (children.length > 0) {
    partial = makeInto();
    await foldInOrder(comm, [own, ...children], partial, op, Tag.REDUCE);
  }
  const parent = treeParent(me);
  if (parent >= 0) await c.send(partial, lo + parent, Tag.REDUCE);
  return partial;
}

/**
 * Binomial reduce whose trees cover contiguous rank ranges, so operands combine in rank order
 * whatever the root. Root 0: one tree over all ranks. Root r > 0: a tree over [0, r) rooted at 0
 * and one over [r, size) rooted at r; rank 0 sends the lower range's result L to r, which
 * computes L op U with U its own range's result. In place (`send === null` at the root) the
 * root's operand is in `recv`.
 */
export async function reduceTree(
  comm: CollComm,
  send: NumericArray | null,
  recv: NumericArray | null,
  op: ReduceOp,
  root: number,
): Promise<void> {
  const c = comm.coll;
  const isRoot = c.rank === root;
  const own = send ?? recv!;
  // The root accumulates in its receive buffer; everybody else in scratch memory.
  const makeInto = isRoot ? () => recv! : () => similarArray(own);
  if (root === 0) {
    const result = await reduceRange(comm, 0, c.size, own, makeInto, op);
    if (isRoot && result !== recv) recv!.set(result as never);
    return;
  }
  if (c.rank < root) {
    const lower = await reduceRange(comm, 0, root, own, makeInto, op);
    if (c.rank === 0) await c.send(lower, root, Tag.REDUCE);
    return;
  }
  const upper = await reduceRange(comm, root, c.size, own, makeInto, op);
  if (!isRoot) return;
  const lower = similarArray(own);
  await c.recv(lower, 0, Tag.REDUCE);
  op.apply(lower, upper, recv!);
}
