/**
 * The coll framework interface (Ch. 6, App. D), type API 1.1.0: what a collective module exports
 * and what the MPI layer hands it.
 *
 * - Selection is per communicator (Ch. 6.1.4): every available module's `query(comm)` is asked
 *   about each new communicator; the highest priority wins and its `init(comm)` returns the
 *   actions for that communicator. Unselected modules stay open until MPI.finalize.
 * - A module implements any subset of the collectives; every function it leaves out falls back to
 *   lam_basic's (Ch. 6.1.3). Intra- and intercommunicator variants are separate functions.
 * - lam_basic is the last candidate: when every module the selector allows declines a
 *   communicator, lam_basic serves it (`--ssi coll smp` works on COMM_SELF); `^lam_basic` turns
 *   both fallbacks off (see `framework.ts`).
 * - Modules see a communicator only as `CollComm` (`./coll-comm.ts`): identity, point-to-point
 *   on `comm.coll` (a twin with its own context: collective traffic never matches the user's
 *   messages), node locality, and sub-communicator construction. Never the concrete class.
 * - Everything arrives already checked and normalised by the MPI layer (roots, counts, lengths,
 *   in-place): data movement on bytes, reductions on typed arrays of one element type with an op
 *   that applies to it. A module never sees user objects.
 * - `init` may create sub-communicators (`comm.split`, ...): construction is re-entrant and each
 *   sub-communicator gets its own selection (the smp module's hierarchy).
 */
import type { ParamRegistry, SsiModule } from '@ssi/core';
import { FRAMEWORKS } from '@ssi/core';
import type { CollComm } from './coll-comm';
import type { ReduceOp } from './ops';

/**
 * The coll type-API version this MPI layer implements. Core's `FRAMEWORKS` is the one source of
 * truth; a module declares its own literal (the version it was built for), never this constant.
 */
export const COLL_API_VERSION: string = FRAMEWORKS.coll.api;

/** A typed array a reduction works on. */
/** Typed arrays whose elements are JS numbers holding integers. */
export type IntArray =
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array;
export type FloatArray = Float32Array | Float64Array;
export type BigArray = BigInt64Array | BigUint64Array;
export type NumericArray = IntArray | FloatArray | BigArray;

/**
 * Byte counts and displacements of the v-variants, one entry per rank (of the remote group for
 * intercommunicators).
 */
export interface VLayout {
  counts: readonly number[];
  displs: readonly number[];
}

/**
 * The collective operations of one communicator. Buffers are byte views (`Uint8Array`) unless a
 * reduction needs the element type. `send === null` is MPI_IN_PLACE: the data already is in
 * `recv` where the root's (or this rank's) contribution belongs. Arguments that only matter at the
 * root (`recv` of gather, `send` of scatter) are `null` elsewhere. Every function resolves when
 * this process's part is done and its buffers may be reused (MPI semantics of blocking calls).
 */
export interface CollActions {
  barrier?(comm: CollComm): Promise<void>;
  /** `buf` is the root's data and every other rank's destination. */
  bcast?(comm: CollComm, buf: Uint8Array, root: number): Promise<void>;
  /** `send` has this rank's block; at the root `recv` has size blocks of send.length bytes. */
  gather?(
    comm: CollComm,
    send: Uint8Array | null,
    recv: Uint8Array | null,
    root: number,
  ): Promise<void>;
  gatherv?(
    comm: CollComm,
    send: Uint8Array | null,
    recv: Uint8Array | null,
    layout: VLayout | null,
    root: number,
  ): Promise<void>;
  /** At the root `send` has size blocks of recv.length bytes; every rank receives its block. */
  scatter?(
    comm: CollComm,
    send: Uint8Array | null,
    recv: Uint8Array | null,
    root: number,
  ): Promise<void>;
  scatterv?(
    comm: CollComm,
    send: Uint8Array | null,
    layout: VLayout | null,
    recv: Uint8Array | null,
    root: number,
  ): Promise<void>;
  allgather?(comm: CollComm, send: Uint8Array | null, recv: Uint8Array): Promise<void>;
  allgatherv?(
    comm: CollComm,
    send: Uint8Array | null,
    recv: Uint8Array,
    layout: VLayout,
  ): Promise<void>;
  /** `send` and `recv` hold size blocks each, block i for / from rank i. */
  alltoall?(comm: CollComm, send: Uint8Array | null, recv: Uint8Array): Promise<void>;
  alltoallv?(
    comm: CollComm,
    send: Uint8Array | null,
    sendLayout: VLayout,
    recv: Uint8Array,
    recvLayout: VLayout,
  ): Promise<void>;
  /** alltoallw: a separate buffer per peer in each direction (MPI's per-peer datatypes). */
  alltoallw?(
    comm: CollComm,
    send: readonly Uint8Array[],
    recv: readonly Uint8Array[],
  ): Promise<void>;
  /** Operands combine in rank order: recv = x0 op x1 op ... (deterministic, Ch. 6.3.2). */
  reduce?(
    comm: CollComm,
    send: NumericArray | null,
    recv: NumericArray | null,
    op: ReduceOp,
    root: number,
  ): Promise<void>;
  allreduce?(
    comm: CollComm,
    send: NumericArray | null,
    recv: NumericArray,
    op: ReduceOp,
  ): Promise<void>;
  /** Reduces size blocks (element counts `counts`), scatters block i to rank i. */
  reduceScatter?(
    comm: CollComm,
    send: NumericArray | null,
    recv: NumericArray,
    counts: readonly number[],
    op: ReduceOp,
  ): Promise<void>;
  /** Inclusive prefix reduction: rank i gets x0 op ... op xi. */
  scan?(comm: CollComm, send: NumericArray | null, recv: NumericArray, op: ReduceOp): Promise<void>;
  /** Exclusive prefix reduction: rank i > 0 gets x0 op ... op x(i-1); rank 0's recv is untouched. */
  exscan?(
    comm: CollComm,
    send: NumericArray | null,
    recv: NumericArray,
    op: ReduceOp,
  ): Promise<void>;

  // Intercommunicator variants: the local and the remote group are the two sides.
  barrierInter?(comm: CollComm): Promise<void>;
  /** `root` is `ROOT` in the root process, `PROC_NULL` in the rest of its group, else the root's rank in the remote group. */
  bcastInter?(comm: CollComm, buf: Uint8Array, root: number): Promise<void>;
  /** Every process gets the reduction of the remote group's contributions. */
  allreduceInter?(
    comm: CollComm,
    send: NumericArray,
    recv: NumericArray,
    op: ReduceOp,
  ): Promise<void>;
  /** Every process gets the remote group's blocks in rank order. */
  allgatherInter?(comm: CollComm, send: Uint8Array, recv: Uint8Array): Promise<void>;

  /** Checkpoint quartet (Ch. 7): present only if the module can take part in a checkpoint. */
  interrupt?(comm: CollComm): Promise<void> | void;
  checkpoint?(comm: CollComm): Promise<void> | void;
  continue?(comm: CollComm): Promise<void> | void;
  restart?(comm: CollComm): Promise<void> | void;
}

/** The collective operation names, as `CollActions` keys (no checkpoint functions). */
export type CollFunction = Exclude<
  keyof CollActions,
  'interrupt' | 'checkpoint' | 'continue' | 'restart'
>;

/** What the framework hands `query` and `init` besides the communicator. */
export interface CollContext {
  /** Parameters: the module's own (`coll_<name>_*`) and the base's (`coll_crossover`, ...). */
  params: ParamRegistry;
  /** The coll framework's verbose stream (`coll_verbose`). */
  verbose(level: number, message: string): void;
}

/** What `query` answers when the module wants the communicator. */
export interface CollQueryAnswer {
  /** 0-100; the highest wins (a user-set `coll_<name>_priority` overrides it). */
  priority: number;
}

/** A collective module (`lam_ssi_coll_1_1_0_t`). */
export interface CollModule extends SsiModule {
  type: 'coll';
  /** Can this module serve `comm`, and how eagerly? `null` or a reason string declines. */
  query(
    comm: CollComm,
    ctx: CollContext,
  ): CollQueryAnswer | null | string | Promise<CollQueryAnswer | null | string>;
  /** The actions for `comm` (any subset); may create sub-communicators. */
  init(comm: CollComm, ctx: CollContext): CollActions | Promise<CollActions>;
  /** `comm` is being freed: release what `init` made for it. */
  finalize?(comm: CollComm): Promise<void> | void;
  /** Whether the module supports checkpoint/restart at all (the cr framework ANDs these). */
  hasCheckpoint?: boolean;
}
