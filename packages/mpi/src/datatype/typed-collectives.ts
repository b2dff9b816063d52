import { IN_PLACE, type InPlace } from '../coll/arguments';
import type { ReduceOp } from '../coll/ops';
import type { NumericArray } from '../coll/types';
import type { Communicator } from '../comm';
import { ROOT } from '../constants';
import { type BufferLike, bytesOf, decodeValue, elementSize } from '../data';
import { ErrorClass, MpiError } from '../errors';
import type { Datatype } from './datatype';
import { checkSpan, packInto, unpackFrom } from './pack';
import { isTypedMessage, partsOf, type TypedMessage } from './typed-message';

/**
 * The collectives with `[buffer, datatype, count]` arguments, at the MPI layer: each typed
 * argument is staged in a contiguous buffer of the type's element kind (packed before, unpacked
 * after), and the collective runs on the staged buffers as it does on typed arrays. So every coll
 * module handles derived types without knowing them. Counts of a typed argument are per rank (as
 * MPI's recvcount), v-collective counts in instances and displacements in extents.
 */

type Arg = BufferLike | TypedMessage | InPlace | undefined;

/** Whether any argument of a collective is a typed message (the comm method then comes here). */
export function anyTyped(...args: unknown[]): boolean {
  return args.some(isTypedMessage);
}

/** A typed message staged in a contiguous buffer of its element kind. */
class Staged {
  readonly view: BufferLike;
  /** Elements of `view` per instance of the type. */
  readonly scale: number;

  constructor(
    readonly buf: BufferLike,
    readonly type: Datatype,
    readonly instances: number,
  ) {
    const bytes = Buffer.allocUnsafeSlow(instances * type.size);
    this.view = decodeValue(bytes, type.messageKind) as BufferLike;
    this.scale = type.size / elementSize(type.messageKind);
  }

  pack(): this {
    packInto(this.buf, this.type, this.instances, bytesOf(this.view), 0);
    return this;
  }

  unpack(): void {
    const n = this.instances * this.type.size;
    unpackFrom(bytesOf(this.view), 0, n, this.buf, this.type, this.instances);
  }
}

/** Stages `m` for `perRank × ranks` instances (`ranks` = 1: the message's own count). */
function stage(m: TypedMessage, call: string, ranks = 1): Staged {
  const { buf, type, count } = partsOf(m, call);
  partsOf([buf, type, count * ranks], call); // the whole span must fit too
  return new Staged(buf, type, count * ranks);
}

/** A send argument as a plain buffer (packed when typed). */
function sendArg<T>(a: T | TypedMessage, call: string): T | BufferLike {
  return isTypedMessage(a) ? stage(a, call).pack().view : a;
}

/** A v-collective's typed buffer: block i = `counts[i]` instances at `displs[i]` extents. */
class StagedV {
  readonly view: BufferLike;
  readonly counts: number[];
  readonly displs: number[];
  /** Byte offset in the user's buffer and instances of each block. */
  private readonly at: number[];
  private readonly instances: number[];

  constructor(
    private readonly m: TypedMessage,
    counts: readonly number[],
    displs: readonly number[] | undefined,
    call: string,
  ) {
    const { buf, type } = partsOf([m[0], m[1], 0], call);
    if (!Array.isArray(counts)) {
      throw new MpiError(ErrorClass.ERR_COUNT, `${call}: counts must be an array, one per rank`);
    }
    this.at = [];
    this.instances = [...counts];
    let total = 0;
    counts.forEach((c, i) => {
      const d = displs ? displs[i]! : total;
      if (!Number.isInteger(c) || c < 0 || !Number.isInteger(d) || d < 0) {
        throw new MpiError(
          ErrorClass.ERR_ARG,
          `${call}: counts[${i}] = ${String(c)}, displs[${i}] = ${String(d)}: give integers >= 0`,
        );
      }
      checkSpan(shifted(buf, d * type.extent, call), type, c, call);
      this.at.push(d * type.extent);
      total += c;
    });
    this.view = new Staged(buf, type, total).view;
    const scale = type.size / elementSize(type.messageKind);
    this.counts = counts.map((c) => c * scale);
    this.displs = [];
    let sum = 0;
    for (const c of this.counts) {
      this.displs.push(sum);
      sum += c;
    }
  }

  pack(): this {
    const [buf, type] = this.m;
    const bytes = bytesOf(this.view);
    const eb = elementSize(type.messageKind);
    this.at.forEach((off, i) => {
      packInto(shifted(buf, off, ''), type, this.instances[i]!, bytes, this.displs[i]! * eb);
    });
    return this;
  }

  unpack(): void {
    const [buf, type] = this.m;
    const bytes = bytesOf(this.view);
    const eb = elementSize(type.messageKind);
    this.at.forEach((off, i) => {
      const n = this.instances[i]!;
      unpackFrom(bytes, this.displs[i]! * eb, n * type.size, shifted(buf, off, ''), type, n);
    });
  }
}

/** The buffer seen from `offset` bytes on (a block of a v-collective). */
function shifted(buf: BufferLike, offset: number, call: string): Uint8Array {
  if (offset > buf.byteLength) {
    throw new MpiError(
      ErrorClass.ERR_BUFFER,
      `${call}: a displacement of ${offset} bytes is past the ${buf.byteLength}-byte buffer`,
    );
  }
  return new Uint8Array(buf.buffer, buf.byteOffset + offset, buf.byteLength - offset);
}

function typedOrNull(a: unknown): TypedMessage | null {
  return isTypedMessage(a) ? a : null;
}

/** A typed argument where it is not used (a non-root's receive buffer) is passed as nothing. */
function plain<T>(a: T): Exclude<T, TypedMessage> | undefined {
  return isTypedMessage(a) ? undefined : (a as Exclude<T, TypedMessage>);
}

/** Stages the arguments; a bad one is raised through the communicator's error handler. */
function prepare<T>(comm: Communicator, call: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw comm.raiseSync(err, call);
  }
}

// ---- the collectives ------------------------------------------------------------------------

export async function bcast(comm: Communicator, m: TypedMessage, root: number): Promise<unknown> {
  const s = prepare(comm, 'bcast', () => stage(m, 'bcast'));
  const sending = comm.isInter ? root === ROOT : comm.rank === root;
  const receiving = comm.isInter ? root >= 0 : !sending;
  if (sending) s.pack();
  await comm.bcast(s.view, root);
  if (receiving) s.unpack();
  return m;
}

export async function gather(
  comm: Communicator,
  data: unknown,
  root: number,
  into: Arg,
): Promise<unknown> {
  const t = comm.rank === root ? typedOrNull(into) : null;
  const [send, recv] = prepare(comm, 'gather', () => {
    const r = t ? stage(t, 'gather', comm.size) : null;
    if (r && data === IN_PLACE) r.pack();
    return [sendArg(data, 'gather'), r] as const;
  });
  await comm.gather(send, root, recv?.view ?? plain(into as BufferLike | TypedMessage));
  recv?.unpack();
  return comm.rank === root ? into : undefined;
}

export async function gatherv(
  comm: Communicator,
  data: Arg,
  counts: readonly number[] | null,
  displs: readonly number[] | undefined,
  root: number,
  into: Arg,
): Promise<unknown> {
  const t = comm.rank === root ? typedOrNull(into) : null;
  const [send, recv] = prepare(comm, 'gatherv', () => {
    const r = t ? new StagedV(t, counts ?? [], displs, 'gatherv') : null;
    if (r && data === IN_PLACE) r.pack();
    return [sendArg(data, 'gatherv') as BufferLike | InPlace, r] as const;
  });
  await comm.gatherv(
    send,
    recv ? recv.counts : counts,
    recv ? recv.displs : displs,
    root,
    recv?.view ?? (plain(into) as BufferLike | undefined),
  );
  recv?.unpack();
  return comm.rank === root ? into : undefined;
}

export async function scatter(
  comm: Communicator,
  data: unknown,
  root: number,
  into: Arg,
): Promise<unknown> {
  const t = comm.rank === root ? typedOrNull(data) : null;
  const [send, recv] = prepare(
    comm,
    'scatter',
    () =>
      [
        t ? stage(t, 'scatter', comm.size).pack().view : plain(data),
        isTypedMessage(into) ? stage(into, 'scatter') : null,
      ] as const,
  );
  await comm.scatter(send, root, recv?.view ?? (into as BufferLike | InPlace | undefined));
  recv?.unpack();
  return into;
}

export async function scatterv(
  comm: Communicator,
  data: Arg | null,
  counts: readonly number[] | null,
  displs: readonly number[] | undefined,
  root: number,
  into: Arg,
): Promise<unknown> {
  const t = comm.rank === root ? typedOrNull(data) : null;
  const [send, recv] = prepare(
    comm,
    'scatterv',
    () =>
      [
        t ? new StagedV(t, counts ?? [], displs, 'scatterv').pack() : null,
        isTypedMessage(into) ? stage(into, 'scatterv') : null,
      ] as const,
  );
  await comm.scatterv(
    send ? send.view : ((plain(data) ?? null) as BufferLike | null),
    send ? send.counts : counts,
    send ? send.displs : displs,
    root,
    recv?.view ?? (into as BufferLike | InPlace),
  );
  recv?.unpack();
  return into;
}

export async function allgather(comm: Communicator, data: unknown, into: Arg): Promise<unknown> {
  const [send, recv] = prepare(comm, 'allgather', () => {
    const r = isTypedMessage(into) ? stage(into, 'allgather', comm.remoteSize) : null;
    if (r && data === IN_PLACE) r.pack();
    return [sendArg(data, 'allgather'), r] as const;
  });
  await comm.allgather(send, recv?.view ?? (into as BufferLike));
  recv?.unpack();
  return into;
}

export async function allgatherv(
  comm: Communicator,
  data: Arg,
  counts: readonly number[],
  displs: readonly number[] | undefined,
  into: Arg,
): Promise<unknown> {
  const [send, recv] = prepare(comm, 'allgatherv', () => {
    const r = isTypedMessage(into) ? new StagedV(into, counts, displs, 'allgatherv') : null;
    if (r && data === IN_PLACE) r.pack();
    return [sendArg(data, 'allgatherv') as BufferLike | InPlace, r] as const;
  });
  await comm.allgatherv(
    send,
    recv ? recv.counts : counts,
    recv ? recv.displs : displs,
    recv?.view ?? (into as BufferLike),
  );
  recv?.unpack();
  return into;
}

export async function alltoall(comm: Communicator, data: unknown, into: Arg): Promise<unknown> {
  const n = comm.remoteSize;
  const t = typedOrNull(data);
  const [send, recv] = prepare(comm, 'alltoall', () => {
    const r = isTypedMessage(into) ? stage(into, 'alltoall', n) : null;
    if (r && data === IN_PLACE) r.pack();
    return [t ? stage(t, 'alltoall', n).pack().view : data, r] as const;
  });
  await comm.alltoall(send as BufferLike, recv?.view ?? (into as BufferLike));
  recv?.unpack();
  return into;
}

export async function alltoallv(
  comm: Communicator,
  data: Arg,
  sendCounts: readonly number[],
  sendDispls: readonly number[] | undefined,
  into: Arg,
  recvCounts: readonly number[],
  recvDispls: readonly number[] | undefined,
): Promise<unknown> {
  const t = typedOrNull(data);
  const [send, recv] = prepare(
    comm,
    'alltoallv',
    () =>
      [
        t ? new StagedV(t, sendCounts, sendDispls, 'alltoallv').pack() : null,
        isTypedMessage(into) ? new StagedV(into, recvCounts, recvDispls, 'alltoallv') : null,
      ] as const,
  );
  await comm.alltoallv(
    send ? send.view : (data as BufferLike),
    send ? send.counts : sendCounts,
    send ? send.displs : sendDispls,
    recv ? recv.view : (into as BufferLike),
    recv ? recv.counts : recvCounts,
    recv ? recv.displs : recvDispls,
  );
  recv?.unpack();
  return into;
}

export async function alltoallw(
  comm: Communicator,
  sends: readonly (BufferLike | TypedMessage)[],
  intos: readonly (BufferLike | TypedMessage)[],
): Promise<unknown> {
  const [packed, recvs] = prepare(
    comm,
    'alltoallw',
    () =>
      [
        sends.map((m) => sendArg(m, 'alltoallw') as BufferLike),
        intos.map((m) => (isTypedMessage(m) ? stage(m, 'alltoallw') : null)),
      ] as const,
  );
  await comm.alltoallw(
    packed,
    intos.map((m, i) => recvs[i]?.view ?? (m as BufferLike)),
  );
  for (const r of recvs) r?.unpack();
  return intos;
}

/** A reduction operand: the staged elements (a typed array of the type's one numeric kind). */
function operand(m: TypedMessage, call: string): Staged {
  const s = stage(m, call);
  if (m[1].map.homogeneousKind < 0) {
    throw new MpiError(
      ErrorClass.ERR_TYPE,
      `${call}: a reduction needs one element type; ${m[1].name} mixes several`,
    );
  }
  return s;
}

/**
 * reduce, allreduce, scan, exscan: the operands staged, the result unpacked into a typed `into`
 * (a plain `into` or none: the result as the collective returns it).
 */
export async function reduction(
  comm: Communicator,
  call: 'reduce' | 'allreduce' | 'scan' | 'exscan',
  data: unknown,
  op: ReduceOp,
  root: number,
  into: Arg,
): Promise<unknown> {
  const t = typedOrNull(data);
  const gets = call !== 'reduce' || comm.rank === root;
  const [send, recv] = prepare(comm, call, () => {
    const r = gets && isTypedMessage(into) ? operand(into, call) : null;
    if (r && data === IN_PLACE) r.pack();
    return [t ? operand(t, call).pack().view : data, r] as const;
  });
  const res = (recv?.view ?? plain(into)) as NumericArray | undefined;
  let out: unknown;
  if (call === 'reduce') out = await comm.reduce(send, op, root, res);
  else if (call === 'allreduce') out = await comm.allreduce(send, op, res);
  else if (call === 'scan') out = await comm.scan(send, op, res);
  else out = await comm.exscan(send, op, res);
  if (recv && !(call === 'exscan' && comm.rank === 0)) recv.unpack();
  return recv ? (gets ? into : undefined) : out;
}

export async function reduceScatter(
  comm: Communicator,
  data: Arg,
  counts: readonly number[],
  op: ReduceOp,
  into: Arg,
): Promise<unknown> {
  const t = typedOrNull(data);
  const [send, recv] = prepare(
    comm,
    'reduceScatter',
    () =>
      [
        t ? operand(t, 'reduceScatter').pack() : null,
        isTypedMessage(into) ? operand(into, 'reduceScatter') : null,
      ] as const,
  );
  // Counts are in instances of the data's type (or of the result's); staged, in elements.
  const scale = send?.scale ?? recv?.scale ?? 1;
  const out = await comm.reduceScatter(
    (send?.view ?? data) as NumericArray | InPlace,
    counts.map((c) => c * scale),
    op,
    recv?.view as NumericArray | undefined,
  );
  if (recv) {
    recv.unpack();
    return into;
  }
  return out;
}
