import type { Communicator } from '../comm';
import { PROC_NULL, ROOT } from '../constants';
import { type BufferLike, bytesOf, DataKind, decodeValue, encodeValue } from '../data';
import { ErrorClass, MpiError } from '../errors';
import {
  checkOp,
  checkRoom,
  describe,
  elementBytes,
  fromOperand,
  IN_PLACE,
  isBuffer,
  layoutOf,
  prefixSums,
  sameKind,
  toOperand,
} from './arguments';
import { type CommColl, collFunction } from './framework';
import type { ReduceOp } from './ops';
import type { NumericArray } from './types';

/**
 * The collectives as users call them (mpi4py's shape), turned into the normalised calls of the
 * coll interface: buffers become byte views, counts byte counts, IN_PLACE a null send, numbers
 * and plain arrays typed arrays; any other value travels msgpackr-encoded through the same byte
 * collectives (lengths first, then the bytes). Each function runs on every member.
 */

type Coll = CommColl;

function badRoot(comm: Communicator, root: number, call: string): void {
  const ok = comm.isInter
    ? root === ROOT ||
      root === PROC_NULL ||
      (Number.isInteger(root) && root >= 0 && root < comm.remoteSize)
    : Number.isInteger(root) && root >= 0 && root < comm.size;
  if (!ok) {
    throw new MpiError(
      ErrorClass.ERR_ROOT,
      comm.isInter
        ? `${call}: invalid root ${String(root)}; give ROOT in the root, PROC_NULL in the rest of its group, and the root's rank (0-${comm.remoteSize - 1}) in the other group`
        : `${call}: invalid root ${String(root)}; ${comm.name} has ranks 0-${comm.size - 1}`,
    );
  }
}

function intraOnly(comm: Communicator, call: string): void {
  if (comm.isInter) {
    throw new MpiError(
      ErrorClass.ERR_COMM,
      `${call} is not available on intercommunicators (${comm.name}); barrier, bcast, allreduce and allgather are`,
    );
  }
}

const lengths = (values: Uint8Array[]) => Int32Array.from(values.map((v) => v.byteLength));
const encodeObject = (v: unknown) => encodeValue(v).bytes;
const decodeObject = (b: Uint8Array) => decodeValue(b, DataKind.OBJECT);

function splitBlocks(bytes: Uint8Array, sizes: ArrayLike<number>): Uint8Array[] {
  const out: Uint8Array[] = [];
  let off = 0;
  for (let i = 0; i < sizes.length; i++) {
    out.push(bytes.subarray(off, off + sizes[i]!));
    off += sizes[i]!;
  }
  return out;
}

function concat(blocks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(blocks.reduce((n, b) => n + b.byteLength, 0));
  let off = 0;
  for (const b of blocks) {
    out.set(b, off);
    off += b.byteLength;
  }
  return out;
}

/** Not async: it only hands over to the module (an async wrapper adds promise hops per call). */
export function barrier(comm: Communicator, coll: Coll): Promise<void> {
  if (comm.isInter) return collFunction(coll, 'barrierInter', comm)(comm);
  return collFunction(coll, 'barrier', comm)(comm);
}

export async function bcast<T>(comm: Communicator, coll: Coll, data: T, root: number): Promise<T> {
  badRoot(comm, root, 'bcast');
  const fn = comm.isInter
    ? collFunction(coll, 'bcastInter', comm)
    : collFunction(coll, 'bcast', comm);
  if (comm.isInter && root === PROC_NULL) return data;
  const sending = comm.isInter ? root === ROOT : comm.rank === root;
  if (isBuffer(data)) {
    await fn(comm, bytesOf(data), root);
    return data;
  }
  const bytes = sending ? encodeObject(data) : null;
  const len = new Int32Array([bytes?.byteLength ?? 0]);
  await fn(comm, bytesOf(len), root);
  const body = bytes ?? new Uint8Array(len[0]!);
  await fn(comm, body, root);
  return (sending ? data : decodeObject(body)) as T;
}

export async function gather(
  comm: Communicator,
  coll: Coll,
  data: unknown,
  root: number,
  into: BufferLike | undefined,
): Promise<unknown> {
  intraOnly(comm, 'gather');
  badRoot(comm, root, 'gather');
  const fn = collFunction(coll, 'gather', comm);
  const atRoot = comm.rank === root;
  if (data === IN_PLACE || isBuffer(data) || isBuffer(into)) {
    if (data === IN_PLACE && !atRoot)
      throw new MpiError(ErrorClass.ERR_ARG, 'gather: IN_PLACE is for the root only');
    if (data !== IN_PLACE && !isBuffer(data)) {
      throw new MpiError(
        ErrorClass.ERR_BUFFER,
        `gather: ${describe(data)} cannot go into a receive buffer`,
      );
    }
    const send = data === IN_PLACE ? null : bytesOf(data);
    let recv: BufferLike | null = null;
    if (atRoot) {
      const block = send?.byteLength ?? (into ? into.byteLength / comm.size : 0);
      recv =
        into ??
        sameKind(
          data as BufferLike,
          (send!.byteLength / elementBytes(data as BufferLike)) * comm.size,
        );
      checkRoom(recv, comm.size, block, 'gather');
    }
    await fn(comm, send, recv ? bytesOf(recv) : null, root);
    return atRoot ? recv : undefined;
  }
  const mine = encodeObject(data);
  const sizes = atRoot ? new Int32Array(comm.size) : null;
  await fn(comm, bytesOf(new Int32Array([mine.byteLength])), sizes ? bytesOf(sizes) : null, root);
  const gv = collFunction(coll, 'gatherv', comm);
  if (!atRoot) {
    await gv(comm, mine, null, null, root);
    return undefined;
  }
  const all = new Uint8Array(sizes!.reduce((a, b) => a + b, 0));
  await gv(comm, mine, all, { counts: [...sizes!], displs: prefixSums([...sizes!]) }, root);
  return splitBlocks(all, sizes!).map(decodeObject);
}

export async function gatherv(
  comm: Communicator,
  coll: Coll,
  data: BufferLike | typeof IN_PLACE,
  counts: readonly number[] | null,
  displs: readonly number[] | undefined,
  root: number,
  into: BufferLike | undefined,
): Promise<BufferLike | undefined> {
  intraOnly(comm, 'gatherv');
  badRoot(comm, root, 'gatherv');
  const atRoot = comm.rank === root;
  if (atRoot && !isBuffer(into))
    throw new MpiError(ErrorClass.ERR_BUFFER, 'gatherv: the root needs a receive buffer');
  const layout = atRoot ? layoutOf(counts ?? [], displs, comm.size, into!, 'gatherv') : null;
  const send = data === IN_PLACE ? null : bytesOf(data);
  if (atRoot && send && send.byteLength !== layout!.counts[root]) {
    throw new MpiError(
      ErrorClass.ERR_COUNT,
      `gatherv: the root sends ${send.byteLength} bytes but counts[${root}] says ${layout!.counts[root]}`,
    );
  }
  await collFunction(coll, 'gatherv', comm)(
    comm,
    send,
    atRoot ? bytesOf(into!) : null,
    layout,
    root,
  );
  return atRoot ? into : undefined;
}

export async function scatter(
  comm: Communicator,
  coll: Coll,
  data: unknown,
  root: number,
  into: BufferLike | typeof IN_PLACE | undefined,
): Promise<unknown> {
  intraOnly(comm, 'scatter');
  badRoot(comm, root, 'scatter');
  const fn = collFunction(coll, 'scatter', comm);
  const atRoot = comm.rank === root;
  if (isBuffer(into) || into === IN_PLACE) {
    if (atRoot && !isBuffer(data))
      throw new MpiError(ErrorClass.ERR_BUFFER, 'scatter: the root sends a buffer of size blocks');
    const recv = into === IN_PLACE ? null : bytesOf(into);
    if (into === IN_PLACE && !atRoot)
      throw new MpiError(ErrorClass.ERR_ARG, 'scatter: IN_PLACE is for the root only');
    if (atRoot) {
      const block = recv?.byteLength ?? (data as BufferLike).byteLength / comm.size;
      checkRoom(data as BufferLike, comm.size, block, 'scatter');
    }
    await fn(comm, atRoot ? bytesOf(data as BufferLike) : null, recv, root);
    return into === IN_PLACE ? undefined : into;
  }
  let parts: Uint8Array[] | null = null;
  if (atRoot) {
    if (!Array.isArray(data) || data.length !== comm.size) {
      throw new MpiError(
        ErrorClass.ERR_COUNT,
        `scatter: the root gives an array of ${comm.size} values (one per rank), not ${describe(data)}`,
      );
    }
    parts = data.map(encodeObject);
  }
  const len = new Int32Array(1);
  await fn(comm, parts ? bytesOf(lengths(parts)) : null, bytesOf(len), root);
  const mine = new Uint8Array(len[0]!);
  const sizes = parts ? parts.map((p) => p.byteLength) : [];
  await collFunction(coll, 'scatterv', comm)(
    comm,
    parts ? concat(parts) : null,
    parts ? { counts: sizes, displs: prefixSums(sizes) } : null,
    mine,
    root,
  );
  return decodeObject(mine);
}

export async function scatterv(
  comm: Communicator,
  coll: Coll,
  data: BufferLike | null,
  counts: readonly number[] | null,
  displs: readonly number[] | undefined,
  root: number,
  into: BufferLike | typeof IN_PLACE,
): Promise<BufferLike | undefined> {
  intraOnly(comm, 'scatterv');
  badRoot(comm, root, 'scatterv');
  const atRoot = comm.rank === root;
  if (atRoot && !isBuffer(data))
    throw new MpiError(ErrorClass.ERR_BUFFER, 'scatterv: the root needs a send buffer');
  const layout = atRoot ? layoutOf(counts ?? [], displs, comm.size, data, 'scatterv') : null;
  const recv = into === IN_PLACE ? null : bytesOf(into);
  await collFunction(coll, 'scatterv', comm)(
    comm,
    atRoot ? bytesOf(data!) : null,
    layout,
    recv,
    root,
  );
  return into === IN_PLACE ? undefined : into;
}

export async function allgather(
  comm: Communicator,
  coll: Coll,
  data: unknown,
  into: BufferLike | undefined,
): Promise<unknown> {
  const n = comm.isInter ? comm.remoteSize : comm.size;
  const fn = comm.isInter
    ? (c: Communicator, s: Uint8Array | null, r: Uint8Array) =>
        collFunction(coll, 'allgatherInter', comm)(c, s!, r)
    : collFunction(coll, 'allgather', comm);
  if (data === IN_PLACE || isBuffer(data)) {
    if (data === IN_PLACE && (comm.isInter || !isBuffer(into))) {
      throw new MpiError(
        ErrorClass.ERR_ARG,
        'allgather: IN_PLACE needs a receive buffer (and an intracommunicator)',
      );
    }
    const send = data === IN_PLACE ? null : bytesOf(data);
    const recv =
      into ??
      sameKind(
        data as BufferLike,
        ((send?.byteLength ?? 0) / elementBytes(data as BufferLike)) * n,
      );
    const block = send?.byteLength ?? recv.byteLength / n;
    checkRoom(recv, n, block, 'allgather');
    await fn(comm, send, bytesOf(recv));
    return recv;
  }
  const mine = encodeObject(data);
  const sizes = new Int32Array(n);
  await fn(comm, bytesOf(new Int32Array([mine.byteLength])), bytesOf(sizes));
  const all = new Uint8Array(sizes.reduce((a, b) => a + b, 0));
  if (comm.isInter) {
    // No allgatherv between groups: pad every value to the longest and cut afterwards.
    // Both sides pad to the longest value of either group: theirs are in `sizes`, ours come
    // from a reduction within our group.
    const local = comm.local;
    const longestHere = new Int32Array(1);
    await collFunction(await local.collectives(), 'allreduce', local)(
      local.insideCollective,
      new Int32Array([mine.byteLength]),
      longestHere,
      MAX_I32,
    );
    const width = sizes.reduce((a, b) => Math.max(a, b), longestHere[0]!);
    const padded = new Uint8Array(width);
    padded.set(mine);
    const blocks = new Uint8Array(width * n);
    await fn(comm, padded, blocks);
    return [...sizes].map((s, i) => decodeObject(blocks.subarray(i * width, i * width + s)));
  }
  await collFunction(coll, 'allgatherv', comm)(comm, mine, all, {
    counts: [...sizes],
    displs: prefixSums([...sizes]),
  });
  return splitBlocks(all, sizes).map(decodeObject);
}

/** Largest of 32-bit integers, for internal length agreement. */
const MAX_I32: ReduceOp = {
  name: 'MAX',
  commutative: true,
  check: () => null,
  apply(a, b, out) {
    for (let i = 0; i < out.length; i++) out[i] = Math.max(a[i] as number, b[i] as number);
  },
};

export async function allgatherv(
  comm: Communicator,
  coll: Coll,
  data: BufferLike | typeof IN_PLACE,
  counts: readonly number[],
  displs: readonly number[] | undefined,
  into: BufferLike,
): Promise<BufferLike> {
  intraOnly(comm, 'allgatherv');
  if (!isBuffer(into))
    throw new MpiError(ErrorClass.ERR_BUFFER, 'allgatherv needs a receive buffer');
  const layout = layoutOf(counts, displs, comm.size, into, 'allgatherv');
  const send = data === IN_PLACE ? null : bytesOf(data);
  if (send && send.byteLength !== layout.counts[comm.rank]) {
    throw new MpiError(
      ErrorClass.ERR_COUNT,
      `allgatherv: rank ${comm.rank} sends ${send.byteLength} bytes but counts[${comm.rank}] says ${layout.counts[comm.rank]}`,
    );
  }
  await collFunction(coll, 'allgatherv', comm)(comm, send, bytesOf(into), layout);
  return into;
}

export async function alltoall(
  comm: Communicator,
  coll: Coll,
  data: unknown,
  into: BufferLike | undefined,
): Promise<unknown> {
  intraOnly(comm, 'alltoall');
  const fn = collFunction(coll, 'alltoall', comm);
  if (data === IN_PLACE || isBuffer(data)) {
    const send = data === IN_PLACE ? null : bytesOf(data);
    if (!send && !isBuffer(into))
      throw new MpiError(ErrorClass.ERR_ARG, 'alltoall: IN_PLACE needs a receive buffer');
    const recv =
      into ?? sameKind(data as BufferLike, send!.byteLength / elementBytes(data as BufferLike));
    if (send) checkRoom(send, comm.size, send.byteLength / comm.size, 'alltoall');
    checkRoom(recv, comm.size, (send ?? bytesOf(recv)).byteLength / comm.size, 'alltoall');
    await fn(comm, send, bytesOf(recv));
    return recv;
  }
  if (!Array.isArray(data) || data.length !== comm.size) {
    throw new MpiError(
      ErrorClass.ERR_COUNT,
      `alltoall: give an array of ${comm.size} values (one per rank), not ${describe(data)}`,
    );
  }
  const parts = data.map(encodeObject);
  const theirSizes = new Int32Array(comm.size);
  await fn(comm, bytesOf(lengths(parts)), bytesOf(theirSizes));
  const mySizes = parts.map((p) => p.byteLength);
  const all = new Uint8Array(theirSizes.reduce((a, b) => a + b, 0));
  await collFunction(coll, 'alltoallv', comm)(
    comm,
    concat(parts),
    { counts: mySizes, displs: prefixSums(mySizes) },
    all,
    { counts: [...theirSizes], displs: prefixSums([...theirSizes]) },
  );
  return splitBlocks(all, theirSizes).map(decodeObject);
}

export async function alltoallv(
  comm: Communicator,
  coll: Coll,
  data: BufferLike,
  sendCounts: readonly number[],
  sendDispls: readonly number[] | undefined,
  into: BufferLike,
  recvCounts: readonly number[],
  recvDispls: readonly number[] | undefined,
): Promise<BufferLike> {
  intraOnly(comm, 'alltoallv');
  if (!isBuffer(data) || !isBuffer(into))
    throw new MpiError(ErrorClass.ERR_BUFFER, 'alltoallv needs send and receive buffers');
  const s = layoutOf(sendCounts, sendDispls, comm.size, data, 'alltoallv (send)');
  const r = layoutOf(recvCounts, recvDispls, comm.size, into, 'alltoallv (receive)');
  await collFunction(coll, 'alltoallv', comm)(comm, bytesOf(data), s, bytesOf(into), r);
  return into;
}

export async function alltoallw(
  comm: Communicator,
  coll: Coll,
  sends: readonly BufferLike[],
  intos: readonly BufferLike[],
): Promise<readonly BufferLike[]> {
  intraOnly(comm, 'alltoallw');
  if (
    sends.length !== comm.size ||
    intos.length !== comm.size ||
    ![...sends, ...intos].every(isBuffer)
  ) {
    throw new MpiError(
      ErrorClass.ERR_ARG,
      `alltoallw: give ${comm.size} send and ${comm.size} receive buffers`,
    );
  }
  await collFunction(coll, 'alltoallw', comm)(comm, sends.map(bytesOf), intos.map(bytesOf));
  return intos;
}

/** Shared by the reductions: operand in, result buffer allocated or checked, shape kept. */
function reductionBuffers(
  data: unknown,
  into: NumericArray | undefined,
  op: ReduceOp,
  call: string,
) {
  if (data === IN_PLACE) {
    if (!into)
      throw new MpiError(ErrorClass.ERR_ARG, `${call}: IN_PLACE needs the data in \`into\``);
    checkOp(op, into, call);
    return { send: null, recv: into, shape: 'array' as const };
  }
  const { array, shape } = toOperand(data, call);
  checkOp(op, array, call);
  const recv = into ?? sameKind(array, array.length);
  if (recv.constructor !== array.constructor || recv.length !== array.length) {
    throw new MpiError(
      ErrorClass.ERR_TRUNCATE,
      `${call}: the result buffer (${describe(recv)}) must be a ${array.constructor.name} of ${array.length} elements like the data`,
    );
  }
  return { send: array, recv, shape };
}

export async function reduce(
  comm: Communicator,
  coll: Coll,
  data: unknown,
  op: ReduceOp,
  root: number,
  into: NumericArray | undefined,
): Promise<unknown> {
  intraOnly(comm, 'reduce');
  badRoot(comm, root, 'reduce');
  const atRoot = comm.rank === root;
  if (data === IN_PLACE && !atRoot)
    throw new MpiError(ErrorClass.ERR_ARG, 'reduce: IN_PLACE is for the root only');
  const { send, recv, shape } = reductionBuffers(data, atRoot ? into : undefined, op, 'reduce');
  await collFunction(coll, 'reduce', comm)(comm, send, atRoot ? recv : null, op, root);
  return atRoot ? fromOperand(recv, shape) : undefined;
}

export async function allreduce(
  comm: Communicator,
  coll: Coll,
  data: unknown,
  op: ReduceOp,
  into: NumericArray | undefined,
): Promise<unknown> {
  const { send, recv, shape } = reductionBuffers(data, into, op, 'allreduce');
  if (comm.isInter) {
    if (!send)
      throw new MpiError(
        ErrorClass.ERR_ARG,
        'allreduce: IN_PLACE is not allowed on intercommunicators',
      );
    await collFunction(coll, 'allreduceInter', comm)(comm, send, recv, op);
  } else await collFunction(coll, 'allreduce', comm)(comm, send, recv, op);
  return fromOperand(recv, shape);
}

export async function reduceScatter(
  comm: Communicator,
  coll: Coll,
  data: NumericArray | typeof IN_PLACE,
  counts: readonly number[],
  op: ReduceOp,
  into: NumericArray | undefined,
): Promise<NumericArray> {
  intraOnly(comm, 'reduceScatter');
  layoutOf(counts, undefined, comm.size, null, 'reduceScatter');
  const total = counts.reduce((a, b) => a + b, 0);
  const source = data === IN_PLACE ? into : data;
  if (!source)
    throw new MpiError(ErrorClass.ERR_ARG, 'reduceScatter: IN_PLACE needs the data in `into`');
  const { array } = toOperand(source, 'reduceScatter');
  checkOp(op, array, 'reduceScatter');
  if (array.length !== total) {
    throw new MpiError(
      ErrorClass.ERR_COUNT,
      `reduceScatter: the data has ${array.length} elements, the counts add up to ${total}`,
    );
  }
  const mine = counts[comm.rank]!;
  const recv = data === IN_PLACE ? into! : (into ?? sameKind(array, mine));
  if (data !== IN_PLACE && recv.length !== mine) {
    throw new MpiError(
      ErrorClass.ERR_TRUNCATE,
      `reduceScatter: the result buffer has ${recv.length} elements, counts[${comm.rank}] is ${mine}`,
    );
  }
  await collFunction(coll, 'reduceScatter', comm)(
    comm,
    data === IN_PLACE ? null : array,
    recv,
    counts,
    op,
  );
  return recv;
}

export async function scan(
  comm: Communicator,
  coll: Coll,
  data: unknown,
  op: ReduceOp,
  into: NumericArray | undefined,
  exclusive: boolean,
): Promise<unknown> {
  const call = exclusive ? 'exscan' : 'scan';
  intraOnly(comm, call);
  const { send, recv, shape } = reductionBuffers(data, into, op, call);
  await collFunction(coll, exclusive ? 'exscan' : 'scan', comm)(comm, send, recv, op);
  if (exclusive && comm.rank === 0) return shape === 'array' ? recv : undefined;
  return fromOperand(recv, shape);
}
