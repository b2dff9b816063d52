import type { ParamRegistry } from '@ssi/core';
import { AttributeStore, type Keyval } from './attributes';
import type { BsendBuffer } from './bsend';
import * as api from './coll/api';
import type { InPlace } from './coll/arguments';
import type { CollFramework, CommColl } from './coll/framework';
import { type CollLocality, localityOf } from './coll/locality';
import type { ReduceOp } from './coll/ops';
import type { NumericArray } from './coll/types';
import { CollectiveSequence, insideCollectiveView } from './collective-call';
import { checkInto, isBufferLike, toMpiError } from './comm-checks';
import {
  type ContextSource,
  checkFreeable,
  compareComms,
  createComm,
  createIntercomm,
  dupComm,
  mergeIntercomm,
  splitComm,
} from './comm-management';
import type { CommRegistry } from './comm-registry';
import { ANY_SOURCE, ANY_TAG, COLL_CID_BIT, type Comparison, LOCAL_CID_BIT } from './constants';
import type { BufferLike } from './data';
import { bytesOf, DataKind, decodeValue, kindOf } from './data';
import * as typed from './datatype/typed-collectives';
import { isTypedMessage, packMessage, type TypedMessage } from './datatype/typed-message';
import type { Engine } from './engine';
import { ERRORS_ARE_FATAL, ERRORS_RETURN, type Errhandler } from './errhandler';
import { ErrorClass, MpiError } from './errors';
import { Group } from './group';
import { blockingSend, iprobe, probe, recvInto, recvValue } from './p2p/blocking';
import { makeRecv, makeSend, startRequest } from './p2p/nonblocking';
import type { SendMode } from './p2p/request-fill';
import { sendrecvBuffer } from './p2p/sendrecv';
import type { Proc } from './proc';
import type { PersistentRequest, Request } from './request';
import { Status } from './status';
import { cartCreate, cartSub, distGraphCreateAdjacent, graphCreate } from './topology/create';
import { cartOf, distGraphOf, graphOf, type Topology } from './topology/topology';

/** What a communicator needs from the MPI instance that made it. */
export interface CommHost {
  readonly engine: Engine;
  readonly maxTag: number;
  bsendBuffer(): BsendBuffer | null;
  /** ERRORS_ARE_FATAL: abort the job with a message naming rank, communicator and call. */
  fatal(comm: Communicator, error: MpiError, call: string): void;
  /** Ends the whole job (`MPI_Abort`). */
  abort(code: number, why: string): Promise<never>;
  /** Context ids: where new communicators get theirs. */
  readonly contexts: ContextSource;
  /** The coll framework: selects each communicator's collective module(s). */
  readonly collFramework: CollFramework;
  /** Parameters of this process (`coll_base_timeout`, ...). */
  readonly params: ParamRegistry;
  /** The live communicators (a checkpoint visits each one's coll modules). */
  readonly registry: CommRegistry;
}

/**
 * An intracommunicator (`MPI_Comm`): a group of processes and a context. Point-to-point calls
 * follow mpi4py's shape, Promise-based: a blocking call is awaited, a non-blocking call returns a
 * `Request`. Data is any typed array, Buffer or DataView (raw bytes, received without a copy into
 * the caller's buffer) or any other value (msgpackr-encoded).
 *
 * The class is the user's face; each concern lives in its own module: point-to-point in `p2p/`,
 * communicator management in `comm-management.ts`, the order and bounds of collective operations
 * in `collective-call.ts`, argument checks in `comm-checks.ts`, the entry gate in `gate.ts`.
 */
export class Communicator {
  /** Error handler for errors in calls on this communicator (default `ERRORS_ARE_FATAL`). */
  errhandler: Errhandler = ERRORS_ARE_FATAL;
  /** @internal Freed (`MPI_Comm_free`): every later call is an ERR_COMM error. */
  freed = false;
  /** @internal Attribute values (`MPI_Comm_set_attr`). */
  readonly attributes = new AttributeStore();
  /**
   * The process topology (`MPI_Topo_test`: `topology?.kind` is 'cart', 'graph' or 'distGraph'),
   * set by cartCreate / graphCreate / distGraphCreateAdjacent, kept by dup; null otherwise.
   */
  topology: Topology | null = null;

  private collTwin: Communicator | undefined;
  private localTwin: Communicator | undefined;
  private collSetup: Promise<CommColl> | undefined;
  /** `collSetup`'s value once it resolved: a collective then starts without an await. */
  private collReady: CommColl | undefined;
  private readonly sequence = new CollectiveSequence(this);
  private moduleView: Communicator | undefined;

  /** @internal */
  constructor(
    /** @internal */
    readonly host: CommHost,
    /** Context id: messages of different communicators never match. */
    readonly cid: number,
    /** @internal The group: process entries in rank order. */
    readonly procs: readonly Proc[],
    /** This process's rank. */
    readonly rank: number,
    /** Name for messages ("COMM_WORLD"). */
    public name: string,
    /**
     * @internal The remote group of an intercommunicator (point-to-point addresses its ranks);
     * for an intracommunicator the group itself.
     */
    readonly remote: readonly Proc[] = procs,
  ) {}

  /** Is this an intercommunicator (`MPI_Comm_test_inter`)? */
  get isInter(): boolean {
    return this.remote !== this.procs;
  }

  /** Size of the remote group (of the group itself for an intracommunicator). */
  get remoteSize(): number {
    return this.remote.length;
  }

  /** Number of processes (`MPI_Comm_size`). */
  get size(): number {
    return this.procs.length;
  }

  /**
   * @internal A communicator over the same group with another context id: its traffic never
   * matches this one's. Every process of the group must create it with the same `cid`.
   */
  withContext(cid: number, name: string): Communicator {
    return new Communicator(this.host, cid, this.procs, this.rank, name, this.remote);
  }

  /**
   * @internal A new communicator made from this one (dup, split, create, intercommunicators):
   * it inherits the error handler and is live until freed.
   */
  derive(
    cid: number,
    procs: readonly Proc[],
    rank: number,
    name: string,
    remote: readonly Proc[] = procs,
  ): Communicator {
    const c = new Communicator(this.host, cid, procs, rank, name, remote);
    c.errhandler = this.errhandler;
    this.host.registry.add(c);
    return c;
  }

  /**
   * The collective twin: the same group under this communicator's collective context, so that
   * what coll modules send never matches the user's point-to-point traffic (Ch. 6.1.2).
   */
  get coll(): Communicator {
    if (this.cid & COLL_CID_BIT) return this;
    if (!this.collTwin) {
      this.collTwin = this.withContext(this.cid | COLL_CID_BIT, `${this.name} (collective)`);
      // Errors inside a collective reach the user through the user's communicator and its
      // handler (the collective call's), never through the twin's.
      this.collTwin.errhandler = ERRORS_RETURN;
    }
    return this.collTwin;
  }

  /**
   * The local group as an intracommunicator of its own (intercommunicators; an intracommunicator
   * is its own): intercommunicator collectives and merge talk within a side through it.
   */
  get local(): Communicator {
    if (!this.isInter) return this;
    if (!this.localTwin) {
      this.localTwin = new Communicator(
        this.host,
        this.cid | LOCAL_CID_BIT,
        this.procs,
        this.rank,
        `${this.name} (local group)`,
      );
      this.localTwin.errhandler = ERRORS_RETURN; // as the collective twin's
    }
    return this.localTwin;
  }

  /** The group (`MPI_Comm_group`; the local group of an intercommunicator). */
  get group(): Group {
    return new Group(this.procs, this.procs[this.rank]!);
  }

  /** Which ranks of the (local) group share a node, for coll modules (`CollComm.locality`). */
  get locality(): CollLocality {
    return localityOf(this.procs, this.rank);
  }

  /** The remote group of an intercommunicator (`MPI_Comm_remote_group`). */
  get remoteGroup(): Group {
    return new Group(this.remote, this.procs[this.rank]!);
  }

  /**
   * @internal This communicator as its coll modules get it (in `query`, `init`, every action
   * and `finalize`): collectives called on it run at once, nested in the one that called the
   * module (see `insideCollectiveView`).
   */
  get insideCollective(): Communicator {
    this.moduleView ??= insideCollectiveView(this, this.sequence, 'sequence');
    return this.moduleView;
  }

  /** @internal The collective modules of this communicator, selected on first use. */
  collectives(): Promise<CommColl> {
    this.collSetup ??= this.host.collFramework.select(this.insideCollective).then((coll) => {
      this.collReady = coll;
      return coll;
    });
    return this.collSetup;
  }

  /** @internal The collective modules, if they have been selected. */
  get selectedCollectives(): Promise<CommColl> | undefined {
    return this.collSetup;
  }

  // ---- communicator management (all collective over this communicator) ----------------------

  /** `MPI_Comm_dup`: same group, new context; attributes copied as their keys say. */
  dup(name = `${this.name}.dup`): Promise<Communicator> {
    return this.sequence.run('dup', () => dupComm(this, name));
  }

  /**
   * `MPI_Comm_split`: one new communicator per colour, ranks ordered by key then old rank;
   * resolves with null (MPI_COMM_NULL) where the colour is UNDEFINED.
   */
  split(color: number, key = 0, name?: string): Promise<Communicator | null> {
    return this.sequence.run('split', () => splitComm(this, color, key, name));
  }

  /** `MPI_Comm_create`: a communicator over `group` (a subset); null where not a member. */
  create(group: Group, name?: string): Promise<Communicator | null> {
    return this.sequence.run('create', () => createComm(this, group, name));
  }

  /**
   * `MPI_Intercomm_create`: this communicator's group and the group of the process `remoteLeader`
   * of `peer` form an intercommunicator. Collective over this communicator and the remote one;
   * the two leaders talk over `peer` with `tag`.
   */
  createIntercomm(
    localLeader: number,
    peer: Communicator,
    remoteLeader: number,
    tag = 0,
    name?: string,
  ): Promise<Communicator> {
    return this.sequence.run('createIntercomm', () =>
      createIntercomm(this, localLeader, peer, remoteLeader, tag, name),
    );
  }

  /**
   * `MPI_Intercomm_merge`: both groups in one intracommunicator, the group that passes
   * `high = false` first (on a tie, the group whose first member has the lower world rank).
   */
  merge(high = false, name?: string): Promise<Communicator> {
    return this.sequence.run('merge', () => mergeIntercomm(this, high, name));
  }

  /** `MPI_Comm_compare`: IDENT, CONGRUENT, SIMILAR or UNEQUAL. */
  compare(other: Communicator): Comparison {
    return compareComms(this, other);
  }

  /**
   * `MPI_Comm_free` (collective): attributes are deleted, the coll modules let go; any later
   * call on this communicator is an ERR_COMM error. Messages in flight on other communicators
   * are not affected.
   */
  free(): Promise<void> {
    return this.sequence.run('free', async () => {
      const bad = checkFreeable(this);
      if (bad) throw bad;
      const setup = this.collSetup;
      this.freed = true;
      this.host.registry.remove(this);
      this.attributes.clear(this);
      if (setup) await this.host.collFramework.release(this.insideCollective, await setup);
    });
  }

  // ---- process topologies (MPI-1 chapter 6; the bodies are in topology/) -----------------

  /**
   * `MPI_Cart_create` (collective): a communicator with a `dims` grid (`periods[d]`: dimension d
   * wraps around); processes beyond the grid get null. `reorder` may renumber (by node).
   */
  cartCreate(
    dims: readonly number[],
    periods?: readonly boolean[],
    reorder = false,
    name?: string,
  ): Promise<Communicator | null> {
    return cartCreate(this, dims, periods, reorder, name);
  }

  /** `MPI_Cart_sub` (collective): the slices that keep the dimensions where `remainDims` is true. */
  cartSub(remainDims: readonly boolean[], name?: string): Promise<Communicator | null> {
    return cartSub(this, remainDims, name);
  }

  /** `MPI_Cart_get`: the grid and this process's coordinates. */
  cartGet(): { dims: number[]; periods: boolean[]; coords: number[] } {
    return this.topo('cartGet', () => {
      const cart = cartOf(this.topology, this.name, 'cartGet');
      return { dims: [...cart.dims], periods: [...cart.periods], coords: cart.coords(this.rank) };
    });
  }

  /** `MPI_Cart_coords`: the coordinates of `rank` (default this process). */
  cartCoords(rank = this.rank): number[] {
    return this.topo('cartCoords', () =>
      cartOf(this.topology, this.name, 'cartCoords').coords(rank),
    );
  }

  /** `MPI_Cart_rank`: the rank at `coords` (periodic dimensions wrap). */
  cartRank(coords: readonly number[]): number {
    return this.topo('cartRank', () => cartOf(this.topology, this.name, 'cartRank').rank(coords));
  }

  /** `MPI_Cart_shift`: neighbours `disp` steps along `direction` (PROC_NULL past an edge). */
  cartShift(direction: number, disp = 1): { source: number; dest: number } {
    return this.topo('cartShift', () =>
      cartOf(this.topology, this.name, 'cartShift').shift(this.rank, direction, disp),
    );
  }

  /**
   * `MPI_Graph_create` (collective): node i's neighbours are `edges[index[i-1]..index[i])`;
   * processes beyond `index.length` get null.
   */
  graphCreate(
    index: readonly number[],
    edges: readonly number[],
    _reorder = false,
    name?: string,
  ): Promise<Communicator | null> {
    return graphCreate(this, index, edges, name);
  }

  /** `MPI_Graph_neighbors` of `rank` (default this process). */
  graphNeighbors(rank = this.rank): number[] {
    return this.topo('graphNeighbors', () =>
      graphOf(this.topology, this.name, 'graphNeighbors').neighbors(rank),
    );
  }

  /** `MPI_Graph_get`: the graph in MPI-1's index/edges form. */
  graphGet(): { index: number[]; edges: number[] } {
    return this.topo('graphGet', () => {
      const g = graphOf(this.topology, this.name, 'graphGet');
      return { index: [...g.index], edges: [...g.edges] };
    });
  }

  /** `MPI_Dist_graph_create_adjacent` (collective): this process's in- and out-neighbours. */
  distGraphCreateAdjacent(
    sources: readonly number[],
    destinations: readonly number[],
    name?: string,
  ): Promise<Communicator> {
    return distGraphCreateAdjacent(this, sources, destinations, name);
  }

  /** `MPI_Dist_graph_neighbors`. */
  distGraphNeighbors(): { sources: number[]; destinations: number[] } {
    return this.topo('distGraphNeighbors', () => {
      const g = distGraphOf(this.topology, this.name, 'distGraphNeighbors');
      return { sources: [...g.sources], destinations: [...g.destinations] };
    });
  }

  /** Runs a local topology query; its errors go through the error handler. */
  private topo<T>(call: string, body: () => T): T {
    try {
      this.checkUsable(call);
      return body();
    } catch (err) {
      throw err instanceof MpiError && this.freed ? err : this.raiseSync(err, call);
    }
  }

  /** Caches `value` on this communicator under `key` (`MPI_Comm_set_attr`). */
  setAttr<T>(key: Keyval<T>, value: T): void {
    this.checkUsable('setAttr');
    this.attributes.set(this, key, value);
  }

  getAttr<T>(key: Keyval<T>): T | undefined {
    this.checkUsable('getAttr');
    return this.attributes.get(key);
  }

  deleteAttr<T>(key: Keyval<T>): void {
    this.checkUsable('deleteAttr');
    this.attributes.delete(this, key);
  }

  // ---- collectives (Ch. 6; every member calls them in the same order) ----------------------

  /** `MPI_Barrier`: resolves when every member has called it. */
  barrier(): Promise<void> {
    return this.collective('barrier', (coll, self) => api.barrier(self, coll));
  }

  /**
   * `MPI_Bcast`: the root's `data` at every member. A buffer is filled in place (and returned);
   * any other value is returned decoded. On an intercommunicator `root` is ROOT in the root
   * process, PROC_NULL in the rest of its group and the root's rank in the other group.
   */
  bcast<T>(data: T, root = 0): Promise<T> {
    if (isTypedMessage(data)) return typed.bcast(this, data, root) as Promise<T>;
    return this.collective('bcast', (coll, self) => api.bcast(self, coll, data, root));
  }

  /**
   * `MPI_Gather`: every member's block at the root, in rank order. Buffers: the root gets them in
   * `into` (or a new array of the same type), IN_PLACE at the root takes its block from `into`.
   * Other values: the root gets an array. Resolves with undefined elsewhere.
   */
  gather<T = unknown>(
    data: T | InPlace,
    root = 0,
    into?: BufferLike | TypedMessage,
  ): Promise<T[] | BufferLike | undefined> {
    if (typed.anyTyped(data, into)) return typed.gather(this, data, root, into) as Promise<T[]>;
    return this.collective('gather', (coll, self) =>
      api.gather(self, coll, data, root, into as BufferLike),
    ) as Promise<T[] | BufferLike | undefined>;
  }

  /** `MPI_Gatherv`: blocks of `counts[i]` elements at `displs[i]` of the root's `into`. */
  gatherv(
    data: BufferLike | TypedMessage | InPlace,
    counts: readonly number[] | null,
    displs: readonly number[] | undefined,
    root: number,
    into?: BufferLike | TypedMessage,
  ): Promise<BufferLike | undefined> {
    if (isTypedMessage(data) || isTypedMessage(into)) {
      return typed.gatherv(this, data, counts, displs, root, into) as Promise<BufferLike>;
    }
    return this.collective('gatherv', (coll, self) =>
      api.gatherv(self, coll, data, counts, displs, root, into),
    );
  }

  /**
   * `MPI_Scatter`: block i of the root's data to member i. Buffers when `into` is one (the root's
   * data then holds size blocks); otherwise the root passes an array of size values.
   */
  scatter<T = unknown>(
    data: unknown,
    root = 0,
    into?: BufferLike | TypedMessage | InPlace,
  ): Promise<T> {
    if (isTypedMessage(data) || isTypedMessage(into)) {
      return typed.scatter(this, data, root, into) as Promise<T>;
    }
    return this.collective('scatter', (coll, self) =>
      api.scatter(self, coll, data, root, into),
    ) as Promise<T>;
  }

  /** `MPI_Scatterv`: `counts[i]` elements at `displs[i]` of the root's data to member i. */
  scatterv(
    data: BufferLike | TypedMessage | null,
    counts: readonly number[] | null,
    displs: readonly number[] | undefined,
    root: number,
    into: BufferLike | TypedMessage | InPlace,
  ): Promise<BufferLike | undefined> {
    if (isTypedMessage(data) || isTypedMessage(into)) {
      return typed.scatterv(this, data, counts, displs, root, into) as Promise<BufferLike>;
    }
    return this.collective('scatterv', (coll, self) =>
      api.scatterv(self, coll, data, counts, displs, root, into),
    );
  }

  /** `MPI_Allgather`: every member's block at every member (buffers into `into`, else an array). */
  allgather<T = unknown>(
    data: T | InPlace,
    into?: BufferLike | TypedMessage,
  ): Promise<T[] | BufferLike> {
    if (typed.anyTyped(data, into)) return typed.allgather(this, data, into) as Promise<T[]>;
    return this.collective('allgather', (coll, self) =>
      api.allgather(self, coll, data, into as BufferLike),
    ) as Promise<T[] | BufferLike>;
  }

  /** `MPI_Allgatherv`. */
  allgatherv(
    data: BufferLike | TypedMessage | InPlace,
    counts: readonly number[],
    displs: readonly number[] | undefined,
    into: BufferLike | TypedMessage,
  ): Promise<BufferLike> {
    if (isTypedMessage(data) || isTypedMessage(into)) {
      return typed.allgatherv(this, data, counts, displs, into) as Promise<BufferLike>;
    }
    return this.collective('allgatherv', (coll, self) =>
      api.allgatherv(self, coll, data, counts, displs, into),
    );
  }

  /** `MPI_Alltoall`: block j of member i's data becomes block i of member j's result. */
  alltoall<T = unknown>(
    data: T[] | BufferLike | TypedMessage | InPlace,
    into?: BufferLike | TypedMessage,
  ): Promise<T[] | BufferLike> {
    if (typed.anyTyped(data, into)) return typed.alltoall(this, data, into) as Promise<T[]>;
    return this.collective('alltoall', (coll, self) =>
      api.alltoall(self, coll, data, into as BufferLike),
    ) as Promise<T[] | BufferLike>;
  }

  /** `MPI_Alltoallv`. */
  alltoallv(
    data: BufferLike | TypedMessage,
    sendCounts: readonly number[],
    sendDispls: readonly number[] | undefined,
    into: BufferLike | TypedMessage,
    recvCounts: readonly number[],
    recvDispls?: readonly number[],
  ): Promise<BufferLike> {
    if (isTypedMessage(data) || isTypedMessage(into)) {
      return typed.alltoallv(
        this,
        data,
        sendCounts,
        sendDispls,
        into,
        recvCounts,
        recvDispls,
      ) as Promise<BufferLike>;
    }
    return this.collective('alltoallv', (coll, self) =>
      api.alltoallv(self, coll, data, sendCounts, sendDispls, into, recvCounts, recvDispls),
    );
  }

  /** `MPI_Alltoallw`: one send and one receive buffer per member, of any types. */
  alltoallw(
    sends: readonly (BufferLike | TypedMessage)[],
    intos: readonly (BufferLike | TypedMessage)[],
  ): Promise<readonly BufferLike[]> {
    if (typed.anyTyped(...sends, ...intos)) {
      return typed.alltoallw(this, sends, intos) as Promise<BufferLike[]>;
    }
    return this.collective('alltoallw', (coll, self) =>
      api.alltoallw(self, coll, sends as BufferLike[], intos as BufferLike[]),
    );
  }

  /**
   * `MPI_Reduce`: data (typed array, number, bigint or array of numbers) combined with `op` in
   * rank order; the result at the root in the data's shape, undefined elsewhere.
   */
  reduce<T>(
    data: T | InPlace,
    op: ReduceOp,
    root = 0,
    into?: NumericArray | TypedMessage,
  ): Promise<T | undefined> {
    if (typed.anyTyped(data, into)) {
      return typed.reduction(this, 'reduce', data, op, root, into) as Promise<T>;
    }
    return this.collective('reduce', (coll, self) =>
      api.reduce(self, coll, data, op, root, into as NumericArray),
    ) as Promise<T | undefined>;
  }

  /** `MPI_Allreduce`: the reduction at every member. */
  allreduce<T>(data: T | InPlace, op: ReduceOp, into?: NumericArray | TypedMessage): Promise<T> {
    if (typed.anyTyped(data, into)) {
      return typed.reduction(this, 'allreduce', data, op, 0, into) as Promise<T>;
    }
    return this.collective('allreduce', (coll, self) =>
      api.allreduce(self, coll, data, op, into as NumericArray),
    ) as Promise<T>;
  }

  /** `MPI_Reduce_scatter`: the reduction, block i (`counts[i]` elements) to member i. */
  reduceScatter(
    data: NumericArray | TypedMessage | InPlace,
    counts: readonly number[],
    op: ReduceOp,
    into?: NumericArray | TypedMessage,
  ): Promise<NumericArray> {
    if (isTypedMessage(data) || isTypedMessage(into)) {
      return typed.reduceScatter(this, data, counts, op, into) as Promise<NumericArray>;
    }
    return this.collective('reduceScatter', (coll, self) =>
      api.reduceScatter(self, coll, data, counts, op, into),
    );
  }

  /** `MPI_Scan`: member i gets the reduction of members 0..i. */
  scan<T>(data: T | InPlace, op: ReduceOp, into?: NumericArray | TypedMessage): Promise<T> {
    if (typed.anyTyped(data, into)) {
      return typed.reduction(this, 'scan', data, op, 0, into) as Promise<T>;
    }
    return this.collective('scan', (coll, self) =>
      api.scan(self, coll, data, op, into as NumericArray, false),
    ) as Promise<T>;
  }

  /** `MPI_Exscan`: member i > 0 gets the reduction of members 0..i-1 (member 0: undefined). */
  exscan<T>(
    data: T | InPlace,
    op: ReduceOp,
    into?: NumericArray | TypedMessage,
  ): Promise<T | undefined> {
    if (typed.anyTyped(data, into)) {
      return typed.reduction(this, 'exscan', data, op, 0, into) as Promise<T>;
    }
    return this.collective('exscan', (coll, self) =>
      api.scan(self, coll, data, op, into as NumericArray, true),
    ) as Promise<T | undefined>;
  }

  /** Runs one collective: selects the coll modules on first use, in this communicator's order. */
  private collective<T>(
    call: string,
    body: (coll: CommColl, self: Communicator) => Promise<T>,
  ): Promise<T> {
    return this.sequence.run(call, () => {
      const ready = this.collReady;
      if (ready) return body(ready, this.insideCollective);
      return this.collectives().then((coll) => body(coll, this.insideCollective));
    });
  }

  /** @internal Throws ERR_COMM when this communicator was freed. */
  checkUsable(call: string): void {
    if (this.freed) {
      throw this.raiseSync(
        new MpiError(ErrorClass.ERR_COMM, `${call}: ${this.name} has been freed`),
        call,
      );
    }
  }

  /** @internal */
  engineOf(): Engine {
    return this.host.engine;
  }

  /** @internal Applies the error handler; returns the error for the caller to throw. */
  raiseSync(error: unknown, call: string): MpiError {
    const err = toMpiError(error);
    const h = this.errhandler;
    if (h === ERRORS_ARE_FATAL) this.host.fatal(this, err, call);
    else if (h.fn) h.fn(this, err);
    return err;
  }

  // ---- blocking sends ------------------------------------------------------------------------

  /** Standard-mode send (`MPI_Send`): resolves when `data` may be reused. */
  send(data: unknown, dest: number, tag = 0): Promise<void> {
    return this.blockingSend('send', data, dest, tag);
  }

  /** Buffered-mode send (`MPI_Bsend`): copies into the attached buffer and resolves at once. */
  bsend(data: unknown, dest: number, tag = 0): Promise<void> {
    return this.blockingSend('bsend', data, dest, tag);
  }

  /** Synchronous-mode send (`MPI_Ssend`): resolves once the receiver has matched the message. */
  ssend(data: unknown, dest: number, tag = 0): Promise<void> {
    return this.blockingSend('ssend', data, dest, tag);
  }

  /** Ready-mode send (`MPI_Rsend`): the matching receive must already be posted. */
  rsend(data: unknown, dest: number, tag = 0): Promise<void> {
    return this.blockingSend('rsend', data, dest, tag);
  }

  private blockingSend(mode: SendMode, data: unknown, dest: number, tag: number): Promise<void> {
    return blockingSend(this, mode, data, dest, tag);
  }

  // ---- non-blocking and persistent sends -----------------------------------------------------

  /** Standard-mode non-blocking send (`MPI_Isend`). */
  isend(data: unknown, dest: number, tag = 0): Request<Status> {
    return this.startSend('isend', 'send', data, dest, tag);
  }
  /** Buffered-mode non-blocking send (`MPI_Ibsend`); the request is complete at once. */
  ibsend(data: unknown, dest: number, tag = 0): Request<Status> {
    return this.startSend('ibsend', 'bsend', data, dest, tag);
  }
  /** Synchronous-mode non-blocking send (`MPI_Issend`). */
  issend(data: unknown, dest: number, tag = 0): Request<Status> {
    return this.startSend('issend', 'ssend', data, dest, tag);
  }
  /** Ready-mode non-blocking send (`MPI_Irsend`). */
  irsend(data: unknown, dest: number, tag = 0): Request<Status> {
    return this.startSend('irsend', 'rsend', data, dest, tag);
  }

  /** Persistent standard-mode send (`MPI_Send_init`); each `start()` sends `data`'s current contents. */
  sendInit(data: unknown, dest: number, tag = 0): PersistentRequest<Status> {
    return makeSend(this, 'sendInit', 'send', data, dest, tag, true) as PersistentRequest<Status>;
  }
  /** Persistent buffered-mode send (`MPI_Bsend_init`). */
  bsendInit(data: unknown, dest: number, tag = 0): PersistentRequest<Status> {
    return makeSend(this, 'bsendInit', 'bsend', data, dest, tag, true) as PersistentRequest<Status>;
  }
  /** Persistent synchronous-mode send (`MPI_Ssend_init`). */
  ssendInit(data: unknown, dest: number, tag = 0): PersistentRequest<Status> {
    return makeSend(this, 'ssendInit', 'ssend', data, dest, tag, true) as PersistentRequest<Status>;
  }
  /** Persistent ready-mode send (`MPI_Rsend_init`). */
  rsendInit(data: unknown, dest: number, tag = 0): PersistentRequest<Status> {
    return makeSend(this, 'rsendInit', 'rsend', data, dest, tag, true) as PersistentRequest<Status>;
  }

  private startSend(
    call: string,
    mode: SendMode,
    data: unknown,
    dest: number,
    tag: number,
  ): Request<Status> {
    const r = makeSend(this, call, mode, data, dest, tag, false);
    startRequest(this, r);
    return r;
  }

  /** @internal `PersistentRequest.start`. */
  startPersistent(r: PersistentRequest<unknown>): void {
    startRequest(this, r, 'start');
  }

  // ---- receives --------------------------------------------------------------------------

  /**
   * Blocking receive (`MPI_Recv`).
   *
   * - `recv(into, source?, tag?)`: receives into the typed array / Buffer `into` without an
   *   intermediate copy where the transport allows; resolves with the `Status`.
   * - `recv(source?, tag?, status?)`: receives any message and resolves with its value (a typed
   *   array of the sent type, a Buffer, or the decoded object); fills `status` if given.
   *
   * - `recv([buffer, datatype, count], source?, tag?)`: receives into a derived-type layout;
   *   `status.count` is in instances of the type, `status.getElements(type)` in basic elements.
   *
   * `source` defaults to ANY_SOURCE, `tag` to ANY_TAG.
   */
  recv(into: BufferLike | TypedMessage, source?: number, tag?: number): Promise<Status>;
  recv<T = unknown>(source?: number, tag?: number, status?: Status): Promise<T>;
  recv(
    a?: BufferLike | TypedMessage | number,
    b?: number | Status,
    c?: number | Status,
  ): Promise<Status> | Promise<unknown> {
    if (isBufferLike(a) || isTypedMessage(a)) {
      return recvInto(this, a, (b as number) ?? ANY_SOURCE, (c as number) ?? ANY_TAG);
    }
    return recvValue(
      this,
      (a as number | undefined) ?? ANY_SOURCE,
      (b as number) ?? ANY_TAG,
      c as Status | undefined,
    );
  }

  /**
   * Non-blocking receive (`MPI_Irecv`): `irecv(into, source?, tag?)` resolves `wait()` with the
   * Status; `irecv(source?, tag?)` with the received value (`req.status` has the status).
   */
  irecv(into: BufferLike | TypedMessage, source?: number, tag?: number): Request<Status>;
  irecv<T = unknown>(source?: number, tag?: number): Request<T>;
  irecv(a?: BufferLike | TypedMessage | number, b?: number, c?: number): Request<unknown> {
    const r = makeRecv(this, 'irecv', a, b, c, false);
    startRequest(this, r);
    return r;
  }

  /** Persistent receive (`MPI_Recv_init`), into a buffer or of any value. */
  recvInit(
    into: BufferLike | TypedMessage,
    source?: number,
    tag?: number,
  ): PersistentRequest<Status>;
  recvInit<T = unknown>(source?: number, tag?: number): PersistentRequest<T>;
  recvInit(
    a?: BufferLike | TypedMessage | number,
    b?: number,
    c?: number,
  ): PersistentRequest<unknown> {
    return makeRecv(this, 'recvInit', a, b, c, true) as PersistentRequest<unknown>;
  }

  // ---- probe -------------------------------------------------------------------------------

  /**
   * Non-blocking probe (`MPI_Iprobe`): the Status of a matching message that has arrived (not
   * received), or undefined. `status.count` is in the sender's element type.
   */
  iprobe(source: number = ANY_SOURCE, tag: number = ANY_TAG): Status | undefined {
    return iprobe(this, source, tag);
  }

  /** Blocking probe (`MPI_Probe`): waits until a matching message has arrived. */
  probe(source: number = ANY_SOURCE, tag: number = ANY_TAG): Promise<Status> {
    return probe(this, source, tag);
  }

  // ---- combined ----------------------------------------------------------------------------

  /**
   * Send and receive at once (`MPI_Sendrecv`), deadlock-free in rings and exchanges.
   * `sendrecv(data, dest, sendTag, into, source, recvTag)` resolves with the Status of the
   * receive into `into`; `sendrecv(data, dest, sendTag, source, recvTag, status?)` with the
   * received value.
   */
  sendrecv(
    data: unknown,
    dest: number,
    sendTag: number,
    into: BufferLike | TypedMessage,
    source?: number,
    recvTag?: number,
  ): Promise<Status>;
  sendrecv<T = unknown>(
    data: unknown,
    dest: number,
    sendTag?: number,
    source?: number,
    recvTag?: number,
    status?: Status,
  ): Promise<T>;
  sendrecv(
    data: unknown,
    dest: number,
    sendTag = 0,
    d?: BufferLike | TypedMessage | number,
    e?: number,
    f?: number | Status,
  ): Promise<unknown> {
    if (isBufferLike(d)) {
      try {
        const tag = (f as number | undefined) ?? ANY_TAG;
        const fast = sendrecvBuffer(this, data, dest, sendTag, d, e ?? ANY_SOURCE, tag);
        if (fast !== null) return fast;
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return this.sendrecvRequests(data, dest, sendTag, d, e, f);
  }

  /** `sendrecv` on two public requests (typed messages, values, PROC_NULL, a held gate). */
  private async sendrecvRequests(
    data: unknown,
    dest: number,
    sendTag: number,
    d?: BufferLike | TypedMessage | number,
    e?: number,
    f?: number | Status,
  ): Promise<unknown> {
    if (isBufferLike(d) || isTypedMessage(d)) {
      const r = this.irecv(d, e ?? ANY_SOURCE, (f as number | undefined) ?? ANY_TAG);
      const [st] = await Promise.all([r.wait(), this.sendBeside(r, data, dest, sendTag)]);
      return st;
    }
    const r = this.irecv((d as number | undefined) ?? ANY_SOURCE, e ?? ANY_TAG);
    const [value] = await Promise.all([r.wait(), this.sendBeside(r, data, dest, sendTag)]);
    if (f instanceof Status && r.status) Object.assign(f, r.status);
    return value;
  }

  /**
   * The send half of `sendrecv`, its receive `r` posted: when the send fails (a bad destination,
   * a value it cannot encode, a lost peer), `r` is cancelled, so that it does not stay posted to
   * take a later message into the caller's buffer.
   */
  private sendBeside(
    r: { cancel(): void },
    data: unknown,
    dest: number,
    tag: number,
  ): Promise<unknown> {
    const fail = (err: unknown): never => {
      r.cancel();
      throw err;
    };
    try {
      return this.isend(data, dest, tag).wait().catch(fail);
    } catch (err) {
      return fail(err);
    }
  }

  /**
   * Send the contents of `buf` and receive into the same buffer (`MPI_Sendrecv_replace`).
   */
  async sendrecvReplace(
    buf: BufferLike | TypedMessage,
    dest: number,
    sendTag = 0,
    source: number = ANY_SOURCE,
    recvTag: number = ANY_TAG,
  ): Promise<Status> {
    let bytes: Uint8Array;
    let kind: number;
    try {
      if (isTypedMessage(buf)) ({ bytes, kind } = packMessage(buf, 'sendrecvReplace'));
      else {
        const err = checkInto(buf);
        if (err) throw err;
        bytes = bytesOf(buf);
        kind = kindOf(buf);
      }
    } catch (err) {
      throw this.raiseSync(err, 'sendrecvReplace');
    }
    const copy = Buffer.allocUnsafeSlow(bytes.byteLength);
    copy.set(bytes);
    // Send the copy with the original's kind, so that a receiver without a buffer gets its type.
    const view = kind === DataKind.BUFFER ? copy : decodeValue(copy, kind);
    const r = this.irecv(buf, source, recvTag);
    const s = this.isend(view, dest, sendTag);
    const [st] = await Promise.all([r.wait(), s.wait()]);
    return st;
  }

  /**
   * Aborts the whole job (`MPI_Abort`): every process is killed and the launcher exits with
   * `code`. The promise never settles.
   */
  abort(code = 1): Promise<never> {
    return this.host.abort(code, `${this.name}.abort(${code}) called on rank ${this.rank}`);
  }
}
