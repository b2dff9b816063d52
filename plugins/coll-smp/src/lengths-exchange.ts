import type { CollComm, NumericArray, ReduceOp } from '@ssi/mpi';
import { ErrorClass, MpiError } from '@ssi/mpi';
import { bytesOf } from './buffers';

/** A message's header: the shortest and the longest operand (bytes) its sender has heard of. */
const HEADER = 16;

/**
 * One rank's part of a reduction exchange: the operand lengths heard of so far and, when the
 * operands are small enough to travel in the messages, its partial result (null: lengths only).
 */
export interface Part {
  min: number;
  max: number;
  acc: NumericArray | null;
}

/**
 * A buffer messages of the exchange are built in or received into: the header, then up to
 * `room` bytes of operand. Aligned for every element type (the header is 16 bytes).
 */
export class Stage {
  readonly bytes: Uint8Array;
  private readonly head: Float64Array;

  constructor(room: number) {
    this.bytes = new Uint8Array(HEADER + room);
    this.head = new Float64Array(this.bytes.buffer, 0, 2);
  }

  /** The shortest and longest length the last message received into this stage declared. */
  declared(): { min: number; max: number } {
    return { min: this.head[0]!, max: this.head[1]! };
  }

  /** The message of `part`: its lengths, and its partial when it has one. */
  pack(part: Part): Uint8Array {
    this.head[0] = part.min;
    this.head[1] = part.max;
    const data = part.acc ? bytesOf(part.acc) : null;
    if (data) this.bytes.set(data, HEADER);
    return this.bytes.subarray(0, HEADER + (data?.length ?? 0));
  }

  /** The partial a received message of `got` bytes carries, viewed like `like`, or null. */
  private theirs(got: number, like: NumericArray): NumericArray | null {
    if (got - HEADER !== like.byteLength) return null;
    const Ctor = like.constructor as new (
      b: ArrayBufferLike,
      at: number,
      n: number,
    ) => NumericArray;
    return new Ctor(this.bytes.buffer, HEADER, like.length);
  }

  /**
   * Folds a received message of `got` bytes into `part`: the lengths always, the partial when
   * both have one of the same length, the lower rank's operand first (`mineFirst`), so that every
   * rank of a commutative but non-associative reduction (floating point) ends with the same bits.
   */
  absorb(part: Part, got: number, op: ReduceOp, mineFirst: boolean): void {
    part.min = Math.min(part.min, this.head[0]!);
    part.max = Math.max(part.max, this.head[1]!);
    const theirs = part.acc ? this.theirs(got, part.acc) : null;
    if (!theirs) return;
    if (mineFirst) op.apply(part.acc!, theirs, part.acc!);
    else op.apply(theirs, part.acc!, part.acc!);
  }

  /** Takes a result message of `got` bytes as `part`'s: its lengths, and its data when it fits. */
  adopt(part: Part, got: number): void {
    part.min = this.head[0]!;
    part.max = this.head[1]!;
    const theirs = part.acc ? this.theirs(got, part.acc) : null;
    if (theirs) part.acc!.set(theirs as never);
  }
}

/**
 * The stages of one exchange kept per served communicator (keyed by its hierarchy): a send
 * stage and `count` receive stages of `room` bytes, made again only when a call needs more.
 */
export class StageCache {
  private readonly kept = new WeakMap<object, { send: Stage; recv: Stage[] }>();

  of(key: object, room: number, count: number): { send: Stage; recv: Stage[] } {
    let got = this.kept.get(key);
    if (got === undefined || got.send.bytes.length < HEADER + room || got.recv.length < count) {
      const n = Math.max(1, count);
      got = { send: new Stage(room), recv: Array.from({ length: n }, () => new Stage(room)) };
      this.kept.set(key, got);
    }
    return got;
  }
}

/**
 * An allreduce of `part` over `c` by recursive doubling, for any size: the ranks past the largest
 * power of two first hand their part to a partner below it and get the result back at the end
 * (log2 exchanges on a power of two: one on two nodes). Commutative operators only.
 */
export async function doublingExchange(
  c: CollComm,
  part: Part,
  op: ReduceOp,
  tag: number,
  send: Stage,
  recv: Stage,
): Promise<void> {
  const { rank, size } = c;
  let pof2 = 1;
  while (pof2 * 2 <= size) pof2 *= 2;
  if (rank >= pof2) {
    await c.coll.send(send.pack(part), rank - pof2, tag);
    recv.adopt(part, (await c.coll.recv(recv.bytes, rank - pof2, tag)).byteLength);
    return;
  }
  if (rank + pof2 < size) {
    const got = await c.coll.recv(recv.bytes, rank + pof2, tag);
    recv.absorb(part, got.byteLength, op, true);
  }
  for (let d = 1; d < pof2; d *= 2) {
    const partner = rank ^ d;
    const got = await c.coll.sendrecv(send.pack(part), partner, tag, recv.bytes, partner, tag);
    recv.absorb(part, got.byteLength, op, rank < partner);
  }
  if (rank + pof2 < size) await c.coll.send(send.pack(part), rank + pof2, tag);
}

/**
 * ERR_TRUNCATE on every rank of a reduction whose ranks passed operands of different lengths
 * (an erroneous program): each learned the shortest and the longest in the exchange.
 */
export function lengthsDiffer(part: Part, call: string, comm: string): MpiError | null {
  if (part.min === part.max) return null;
  return new MpiError(
    ErrorClass.ERR_TRUNCATE,
    `smp: ${call} on ${comm}: the ranks' operands are of different lengths (from ${part.min} to ${part.max} bytes)`,
  );
}
