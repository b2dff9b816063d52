/**
 * `CollComm`: what a coll module may use of a communicator (type API 1.2). Modules get this
 * narrow view in `query`, `init`, `finalize` and every action instead of the concrete
 * `Communicator`, so that the MPI layer can change its communicator internals (process entries,
 * context ids, selection state) without breaking installed modules. `Communicator` satisfies it
 * structurally; a test double only has to provide what is listed here.
 *
 * A module gets one object per communicator in all of them (`Communicator.insideCollective`): a
 * view of the user's communicator whose collectives run at once, nested in the operation that
 * called the module, instead of queuing behind it.
 */
import type { Communicator } from '../comm';
import type { BufferLike } from '../data';
import type { Group } from '../group';
import type { Status } from '../status';
import type { CollLocality } from './locality';

/** A non-blocking operation of the collective channel (an MPI `Request`). */
export interface CollRequest {
  wait(): Promise<unknown>;
}

/**
 * Point-to-point on the communicator's collective context (`comm.coll`): the same group, but
 * messages never match the user's. Ranks of an intercommunicator address the remote group.
 * Only byte views travel here; a module never sends user objects.
 */
export interface CollChannel {
  readonly rank: number;
  readonly size: number;
  readonly remoteSize: number;
  send(data: BufferLike, dest: number, tag: number): Promise<void>;
  recv(into: BufferLike, source: number, tag: number): Promise<Status>;
  isend(data: BufferLike, dest: number, tag: number): CollRequest;
  irecv(into: BufferLike, source: number, tag: number): CollRequest;
  sendrecv(
    data: BufferLike,
    dest: number,
    sendTag: number,
    into: BufferLike,
    source: number,
    recvTag: number,
  ): Promise<Status>;
}

/**
 * The MPI collectives as users call them, usable by a module on the communicator it serves (a
 * function it leaves out resolves to lam_basic's) and on the sub-communicators it built.
 */
export type CollUserCalls = Pick<
  Communicator,
  | 'barrier'
  | 'bcast'
  | 'gather'
  | 'gatherv'
  | 'scatter'
  | 'scatterv'
  | 'allgather'
  | 'allgatherv'
  | 'alltoall'
  | 'alltoallv'
  | 'alltoallw'
  | 'reduce'
  | 'allreduce'
  | 'reduceScatter'
  | 'scan'
  | 'exscan'
>;

/** A communicator as a coll module sees it. */
export interface CollComm extends CollUserCalls {
  // ---- identity ----
  /** For messages ("COMM_WORLD", "COMM_WORLD.split(0)"). */
  readonly name: string;
  /** Size of the (local) group. */
  readonly size: number;
  /** This process's rank in the (local) group. */
  readonly rank: number;
  readonly isInter: boolean;
  /** Size of the remote group (equals `size` for an intracommunicator). */
  readonly remoteSize: number;

  // ---- data movement ----
  /** Point-to-point on the collective context: what modules move their data with. */
  readonly coll: CollChannel;
  /** The local group as an intracommunicator (itself for an intracommunicator). */
  readonly local: CollComm;

  // ---- node locality ----
  /** Which ranks of the (local) group share a node; read it once, in `init`. */
  readonly locality: CollLocality;

  // ---- sub-communicators (collective; allowed in `init`, each gets its own selection) ----
  /** The (local) group, to build sub-groups for `create` (`group.incl([...])`). */
  readonly group: Group;
  split(color: number, key?: number, name?: string): Promise<CollComm | null>;
  create(group: Group, name?: string): Promise<CollComm | null>;
  dup(name?: string): Promise<CollComm>;
  /** Frees a sub-communicator the module built (in its `finalize`). */
  free(): Promise<void>;
}
