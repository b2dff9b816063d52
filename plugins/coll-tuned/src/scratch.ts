import type { CollComm, NumericArray } from '@ssi/mpi';
import { similarArray } from '@ssi/mpi';

type ArrayOf = new (buffer: ArrayBuffer, byteOffset: number, length: number) => NumericArray;

/** Typed arrays start on 8-byte boundaries, which suits every element type. */
const aligned = (bytes: number) => Math.ceil(bytes / 8) * 8;

/**
 * Scratch memory of one communicator's collectives, kept from one call to the next. A large
 * reduction used to allocate (and the kernel to zero, and the collector to free) a vector-sized
 * array per call: 0.2-0.5 ms of a 4 MiB allreduce on 2 ranks. Collectives on a communicator run
 * one at a time (the MPI layer orders them), so one region per communicator is enough; what it
 * hands out is only valid until the call returns, and holds whatever the last call left there
 * (every algorithm receives into it before reading). Requests above `keepBytes` in all get fresh
 * arrays that are not kept, so a communicator holds at most `keepBytes`.
 */
export class Scratch {
  private memory = new ArrayBuffer(0);

  constructor(private readonly keepBytes: number) {}

  /** Arrays of `like`'s element type with the given lengths, none overlapping another. */
  arrays<T extends NumericArray>(like: T, ...lengths: number[]): T[] {
    const size = like.BYTES_PER_ELEMENT;
    const starts: number[] = [];
    let bytes = 0;
    for (const n of lengths) {
      starts.push(bytes);
      bytes += aligned(n * size);
    }
    if (bytes > this.keepBytes) return lengths.map((n) => similarArray(like, n));
    if (this.memory.byteLength < bytes) this.memory = new ArrayBuffer(bytes);
    // A Buffer's scratch is a plain Uint8Array, as similarArray gives.
    const ctor = (Buffer.isBuffer(like) ? Uint8Array : like.constructor) as ArrayOf;
    return lengths.map((n, i) => new ctor(this.memory, starts[i]!, n) as T);
  }

  /** One array of `like`'s element type and `length` elements. */
  like<T extends NumericArray>(like: T, length: number = like.length): T {
    return this.arrays(like, length)[0]!;
  }
}

/** Scratch that keeps nothing: what an algorithm called without a communicator's store gets. */
export const FRESH = new Scratch(0);

/** Each communicator's scratch (the same actions may serve several, e.g. simulated ranks). */
export class ScratchStore {
  private readonly byComm = new WeakMap<CollComm, Scratch>();

  constructor(private readonly keepBytes: number) {}

  of(comm: CollComm): Scratch {
    let scratch = this.byComm.get(comm);
    if (!scratch) {
      scratch = new Scratch(this.keepBytes);
      this.byComm.set(comm, scratch);
    }
    return scratch;
  }
}
