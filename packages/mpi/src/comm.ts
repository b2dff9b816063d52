import { AsyncLocalStorage } from 'node:async_hooks';
import { isSsiError, type ParamRegistry } from '@ssi/core';
import { withDeadline } from '@ssi/lam';
import { AttributeStore, type Keyval } from './attributes';
import type { BsendBuffer } from './bsend';
import * as api from './coll/api';
import type { InPlace } from './coll/arguments';
import { BASE_TAG, baseBcast, baseMax } from './coll/base-exchange';
import type { CollFramework, CommColl } from './coll/framework';
import { type CollLocality, localityOf } from './coll/locality';
import type { ReduceOp } from './coll/ops';
import type { NumericArray } from './coll/types';
import {
  agreeOnCid,
  type ContextSource,
  checkSplitArgs,
  checkSubgroup,
  compareComms,
  splitMembers,
} from './comm-management';
import {
  ANY_SOURCE,
  ANY_TAG,
  COLL_CID_BIT,
  type Comparison,
  LOCAL_CID_BIT,
  PROC_NULL,
  UNDEFINED,
} from './constants';
import type { BufferLike } from './data';
import { bytesOf, DataKind, decodeValue, elementSize, encodeValue, kindOf } from './data';
import type { Engine } from './engine';
import { ERRORS_ARE_FATAL, ERRORS_RETURN, type Errhandler } from './errhandler';
import { ErrorClass, MpiError } from './errors';
import { Group } from './group';
import type { Proc } from './proc';
import type { RequestOp } from './request';
import { PersistentRequest, Request } from './request';
import type { ReqTypeValue } from './rpi/request';
import { ReqFlag, ReqMark, ReqState, ReqType, RpiRequest } from './rpi/request';
import { Status } from './status';

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
}

const RESOLVED: Promise<void> = Promise.resolve();

/**
 * Errors from below as MPI errors: an SSI error (a module that is not installed, a bad parameter)
 * is the user's to fix and keeps its message; anything else is a bug and keeps its stack.
 */
function toMpiError(error: unknown): MpiError {
  if (error instanceof MpiError) return error;
  if (isSsiError(error)) return new MpiError(ErrorClass.ERR_OTHER, error.message);
  return new MpiError(ErrorClass.ERR_INTERN, `internal error: ${(error as Error)?.stack ?? error}`);
}

/** Rejects with ERR_OTHER when `p` takes longer than coll_base_timeout: nobody hangs forever. */
class CollTimeout extends MpiError {}

function collTimeout(call: string, comm: string, seconds: number): CollTimeout {
  return new CollTimeout(
    ErrorClass.ERR_OTHER,
    `${call} on ${comm}: the other members did not take part within ${seconds} s ` +
      '(coll_base_timeout); did every member call the same collectives in the same order, with ' +
      'matching arguments?',
  );
}

/** The communicators whose collective operation the current async context runs inside. */
const collectiveScope = new AsyncLocalStorage<ReadonlySet<Communicator>>();

const MERGE_TAG = BASE_TAG + 10;
const CID_WORLD_OR_SELF = [0, 1] as const;

type SendMode = 'send' | 'bsend' | 'ssend' | 'rsend';
const MODE_TYPE: Record<SendMode, ReqTypeValue> = {
  send: ReqType.SEND,
  bsend: ReqType.BSEND,
  ssend: ReqType.SSEND,
  rsend: ReqType.RSEND,
};

function isBufferLike(v: unknown): v is BufferLike {
  return typeof v === 'object' && v !== null && ArrayBuffer.isView(v);
}

function procNullStatus(): Status {
  const st = new Status();
  st.source = PROC_NULL;
  st.tag = ANY_TAG;
  return st;
}

/**
 * An intracommunicator (`MPI_Comm`): a group of processes and a context. Point-to-point calls
 * follow mpi4py's shape, Promise-based: a blocking call is awaited, a non-blocking call returns a
 * `Request`. Data is any typed array, Buffer or DataView (raw bytes, received without a copy into
 * the caller's buffer) or any other value (msgpackr-encoded).
 */
export class Communicator {
  /** Error handler for errors in calls on this communicator (default `ERRORS_ARE_FATAL`). */
  errhandler: Errhandler = ERRORS_ARE_FATAL;

  /** @internal */
  constructor(
    private readonly host: CommHost,
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

  private collTwin: Communicator | undefined;
  private localTwin: Communicator | undefined;
  private collSetup: Promise<CommColl> | undefined;
  /** The last collective operation started on this communicator: the next one runs after it. */
  private collTail: Promise<void> = RESOLVED;
  /** Why collectives on this communicator cannot go on (a timed-out one), if so. */
  private collBroken: string | undefined;
  private freed = false;
  /** @internal Attribute values (`MPI_Comm_set_attr`). */
  readonly attributes = new AttributeStore();

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

  /** @internal The collective modules of this communicator, selected on first use. */
  collectives(): Promise<CommColl> {
    this.collSetup ??= this.host.collFramework.select(this);
    return this.collSetup;
  }

  // ---- communicator management (all collective over this communicator) ----------------------

  /** `MPI_Comm_dup`: same group, new context; attributes copied as their keys say. */
  dup(name = `${this.name}.dup`): Promise<Communicator> {
    return this.collectiveCall('dup', () => this.dupNow(name));
  }

  private async dupNow(name: string): Promise<Communicator> {
    const cid = await agreeOnCid(this.isInter ? this.local : this, this.host.contexts);
    const cidAll = this.isInter ? await this.agreeAcross(cid) : cid;
    const c = new Communicator(this.host, cidAll, this.procs, this.rank, name, this.remote);
    c.errhandler = this.errhandler;
    this.attributes.copyInto(this, c.attributes);
    return c;
  }

  /**
   * `MPI_Comm_split`: one new communicator per colour, ranks ordered by key then old rank;
   * resolves with null (MPI_COMM_NULL) where the colour is UNDEFINED.
   */
  split(color: number, key = 0, name?: string): Promise<Communicator | null> {
    return this.collectiveCall('split', () => this.splitNow(color, key, name));
  }

  private async splitNow(color: number, key: number, name?: string): Promise<Communicator | null> {
    const bad = this.intraOnly('split') ?? checkSplitArgs(color, key);
    if (bad) throw bad;
    const members = await splitMembers(this, color, key);
    const cid = await agreeOnCid(this, this.host.contexts);
    if (!members) return null;
    const me = this.procs[this.rank]!;
    return this.derived(cid, members, members.indexOf(me), name ?? `${this.name}.split(${color})`);
  }

  /** `MPI_Comm_create`: a communicator over `group` (a subset); null where not a member. */
  create(group: Group, name?: string): Promise<Communicator | null> {
    return this.collectiveCall('create', () => this.createNow(group, name));
  }

  private async createNow(group: Group, name?: string): Promise<Communicator | null> {
    const bad = this.intraOnly('create') ?? checkSubgroup(this, group);
    if (bad) throw bad;
    const cid = await agreeOnCid(this, this.host.contexts);
    if (group.rank === UNDEFINED) return null;
    return this.derived(cid, group.procs, group.rank, name ?? `${this.name}.create`);
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
    return this.collectiveCall('createIntercomm', () =>
      this.createIntercommNow(localLeader, peer, remoteLeader, tag, name),
    );
  }

  private async createIntercommNow(
    localLeader: number,
    peer: Communicator,
    remoteLeader: number,
    tag: number,
    name?: string,
  ): Promise<Communicator> {
    const bad = this.intraOnly('createIntercomm') ?? this.badRank(localLeader, 'local leader');
    if (bad) throw bad;
    const localMax = await baseMax(this, this.host.contexts.nextCid);
    let info: Int32Array | null = null;
    if (this.rank === localLeader) {
      const mine = new Int32Array([localMax, ...this.procs.map((p) => p.gps.grank)]);
      const theirs = (await peer.sendrecv(
        mine,
        remoteLeader,
        tag,
        remoteLeader,
        tag,
      )) as Int32Array;
      info = new Int32Array([Math.max(localMax, theirs[0]!), ...theirs.subarray(1)]);
    }
    const agreed = await baseBcast(this, localLeader, info);
    const cid = agreed[0]!;
    this.host.contexts.nextCid = Math.max(this.host.contexts.nextCid, cid + 1);
    const byWorldRank = new Map(this.host.engine.procs.map((p) => [p.gps.grank, p]));
    const remote = [...agreed.subarray(1)].map((g) => byWorldRank.get(g)!);
    const c = new Communicator(
      this.host,
      cid,
      this.procs,
      this.rank,
      name ?? `${this.name}.intercomm`,
      remote,
    );
    c.errhandler = this.errhandler;
    return c;
  }

  /**
   * `MPI_Intercomm_merge`: both groups in one intracommunicator, the group that passes
   * `high = false` first (on a tie, the group whose first member has the lower world rank).
   */
  merge(high = false, name?: string): Promise<Communicator> {
    return this.collectiveCall('merge', () => this.mergeNow(high, name));
  }

  private async mergeNow(high: boolean, name?: string): Promise<Communicator> {
    if (!this.isInter) {
      throw new MpiError(ErrorClass.ERR_COMM, `merge: ${this.name} is not an intercommunicator`);
    }
    const local = this.local;
    const localMax = await baseMax(local, this.host.contexts.nextCid);
    let info: Int32Array | null = null;
    if (this.rank === 0) {
      const mine = new Int32Array([localMax, high ? 1 : 0]);
      const theirs = (await this.coll.sendrecv(mine, 0, MERGE_TAG, 0, MERGE_TAG)) as Int32Array;
      const lowFirst =
        high === !!theirs[1] ? this.procs[0]!.gps.grank < this.remote[0]!.gps.grank : !high;
      info = new Int32Array([Math.max(localMax, theirs[0]!), lowFirst ? 1 : 0]);
    }
    const [cid, mineFirst] = await baseBcast(local, 0, info);
    this.host.contexts.nextCid = Math.max(this.host.contexts.nextCid, cid! + 1);
    const procs = mineFirst ? [...this.procs, ...this.remote] : [...this.remote, ...this.procs];
    const me = this.procs[this.rank]!;
    return this.derived(cid!, procs, procs.indexOf(me), name ?? `${this.name}.merge`);
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
    return this.collectiveCall('free', () => this.freeNow());
  }

  private async freeNow(): Promise<void> {
    if (this.cid === CID_WORLD_OR_SELF[0] || this.cid === CID_WORLD_OR_SELF[1]) {
      throw new MpiError(
        ErrorClass.ERR_COMM,
        `free: ${this.name} is predefined and cannot be freed`,
      );
    }
    const setup = this.collSetup;
    this.freed = true;
    this.attributes.clear(this);
    if (setup) await this.host.collFramework.release(this, await setup);
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
    return this.collective('barrier', (coll) => api.barrier(this, coll));
  }

  /**
   * `MPI_Bcast`: the root's `data` at every member. A buffer is filled in place (and returned);
   * any other value is returned decoded. On an intercommunicator `root` is ROOT in the root
   * process, PROC_NULL in the rest of its group and the root's rank in the other group.
   */
  bcast<T>(data: T, root = 0): Promise<T> {
    return this.collective('bcast', (coll) => api.bcast(this, coll, data, root));
  }

  /**
   * `MPI_Gather`: every member's block at the root, in rank order. Buffers: the root gets them in
   * `into` (or a new array of the same type), IN_PLACE at the root takes its block from `into`.
   * Other values: the root gets an array. Resolves with undefined elsewhere.
   */
  gather<T = unknown>(
    data: T | InPlace,
    root = 0,
    into?: BufferLike,
  ): Promise<T[] | BufferLike | undefined> {
    return this.collective('gather', (coll) => api.gather(this, coll, data, root, into)) as Promise<
      T[] | BufferLike | undefined
    >;
  }

  /** `MPI_Gatherv`: blocks of `counts[i]` elements at `displs[i]` of the root's `into`. */
  gatherv(
    data: BufferLike | InPlace,
    counts: readonly number[] | null,
    displs: readonly number[] | undefined,
    root: number,
    into?: BufferLike,
  ): Promise<BufferLike | undefined> {
    return this.collective('gatherv', (coll) =>
      api.gatherv(this, coll, data, counts, displs, root, into),
    );
  }

  /**
   * `MPI_Scatter`: block i of the root's data to member i. Buffers when `into` is one (the root's
   * data then holds size blocks); otherwise the root passes an array of size values.
   */
  scatter<T = unknown>(data: unknown, root = 0, into?: BufferLike | InPlace): Promise<T> {
    return this.collective('scatter', (coll) =>
      api.scatter(this, coll, data, root, into),
    ) as Promise<T>;
  }

  /** `MPI_Scatterv`: `counts[i]` elements at `displs[i]` of the root's data to member i. */
  scatterv(
    data: BufferLike | null,
    counts: readonly number[] | null,
    displs: readonly number[] | undefined,
    root: number,
    into: BufferLike | InPlace,
  ): Promise<BufferLike | undefined> {
    return this.collective('scatterv', (coll) =>
      api.scatterv(this, coll, data, counts, displs, root, into),
    );
  }

  /** `MPI_Allgather`: every member's block at every member (buffers into `into`, else an array). */
  allgather<T = unknown>(data: T | InPlace, into?: BufferLike): Promise<T[] | BufferLike> {
    return this.collective('allgather', (coll) => api.allgather(this, coll, data, into)) as Promise<
      T[] | BufferLike
    >;
  }

  /** `MPI_Allgatherv`. */
  allgatherv(
    data: BufferLike | InPlace,
    counts: readonly number[],
    displs: readonly number[] | undefined,
    into: BufferLike,
  ): Promise<BufferLike> {
    return this.collective('allgatherv', (coll) =>
      api.allgatherv(this, coll, data, counts, displs, into),
    );
  }

  /** `MPI_Alltoall`: block j of member i's data becomes block i of member j's result. */
  alltoall<T = unknown>(
    data: T[] | BufferLike | InPlace,
    into?: BufferLike,
  ): Promise<T[] | BufferLike> {
    return this.collective('alltoall', (coll) => api.alltoall(this, coll, data, into)) as Promise<
      T[] | BufferLike
    >;
  }

  /** `MPI_Alltoallv`. */
  alltoallv(
    data: BufferLike,
    sendCounts: readonly number[],
    sendDispls: readonly number[] | undefined,
    into: BufferLike,
    recvCounts: readonly number[],
    recvDispls?: readonly number[],
  ): Promise<BufferLike> {
    return this.collective('alltoallv', (coll) =>
      api.alltoallv(this, coll, data, sendCounts, sendDispls, into, recvCounts, recvDispls),
    );
  }

  /** `MPI_Alltoallw`: one send and one receive buffer per member, of any types. */
  alltoallw(
    sends: readonly BufferLike[],
    intos: readonly BufferLike[],
  ): Promise<readonly BufferLike[]> {
    return this.collective('alltoallw', (coll) => api.alltoallw(this, coll, sends, intos));
  }

  /**
   * `MPI_Reduce`: data (typed array, number, bigint or array of numbers) combined with `op` in
   * rank order; the result at the root in the data's shape, undefined elsewhere.
   */
  reduce<T>(
    data: T | InPlace,
    op: ReduceOp,
    root = 0,
    into?: NumericArray,
  ): Promise<T | undefined> {
    return this.collective('reduce', (coll) =>
      api.reduce(this, coll, data, op, root, into),
    ) as Promise<T | undefined>;
  }

  /** `MPI_Allreduce`: the reduction at every member. */
  allreduce<T>(data: T | InPlace, op: ReduceOp, into?: NumericArray): Promise<T> {
    return this.collective('allreduce', (coll) =>
      api.allreduce(this, coll, data, op, into),
    ) as Promise<T>;
  }

  /** `MPI_Reduce_scatter`: the reduction, block i (`counts[i]` elements) to member i. */
  reduceScatter(
    data: NumericArray | InPlace,
    counts: readonly number[],
    op: ReduceOp,
    into?: NumericArray,
  ): Promise<NumericArray> {
    return this.collective('reduceScatter', (coll) =>
      api.reduceScatter(this, coll, data, counts, op, into),
    );
  }

  /** `MPI_Scan`: member i gets the reduction of members 0..i. */
  scan<T>(data: T | InPlace, op: ReduceOp, into?: NumericArray): Promise<T> {
    return this.collective('scan', (coll) =>
      api.scan(this, coll, data, op, into, false),
    ) as Promise<T>;
  }

  /** `MPI_Exscan`: member i > 0 gets the reduction of members 0..i-1 (member 0: undefined). */
  exscan<T>(data: T | InPlace, op: ReduceOp, into?: NumericArray): Promise<T | undefined> {
    return this.collective('exscan', (coll) =>
      api.scan(this, coll, data, op, into, true),
    ) as Promise<T | undefined>;
  }

  /**
   * Runs one collective: selects the coll modules on first use, then as `collectiveCall`.
   */
  private collective<T>(call: string, body: (coll: CommColl) => Promise<T>): Promise<T> {
    return this.collectiveCall(call, async () => body(await this.collectives()));
  }

  /**
   * Runs one collective operation of this communicator (a collective or a constructor): checks
   * the communicator, waits at the entry gate, runs after the collectives called before it on
   * this communicator (calls started without awaiting the previous one would otherwise mix up
   * their messages), bounds the wait by coll_base_timeout and applies the error handler. A
   * collective that timed out leaves messages the others may still send: the communicator is
   * then unusable for collectives, and says so.
   */
  private collectiveCall<T>(call: string, body: () => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      try {
        if (this.freed)
          throw new MpiError(ErrorClass.ERR_COMM, `${call}: ${this.name} has been freed`);
        if (this.collBroken) {
          throw new MpiError(
            ErrorClass.ERR_COMM,
            `${call}: ${this.name} cannot be used for collectives any more: ${this.collBroken}`,
          );
        }
        const engine = this.host.engine;
        if (!engine.gate.open) await engine.gate.deferPromise(() => RESOLVED);
        const seconds = this.host.params.get<number>('coll_base_timeout');
        if (seconds <= 0) return await body();
        try {
          return await withDeadline(body(), seconds * 1000, () =>
            collTimeout(call, this.name, seconds),
          );
        } catch (err) {
          if (err instanceof CollTimeout) this.collBroken = `${call} timed out`;
          throw err;
        }
      } catch (err) {
        throw this.raiseSync(err, call);
      }
    };
    // A collective operation started from inside one on this communicator (a coll module's
    // init building sub-communicators, a module calling another collective) runs at once.
    const inside = collectiveScope.getStore();
    if (inside?.has(this)) return run();
    const scope = new Set(inside ?? []).add(this);
    const inScope = () => collectiveScope.run(scope, run);
    const result = this.collTail.then(inScope, inScope);
    this.collTail = result.then(
      () => {},
      () => {},
    );
    return result;
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

  private intraOnly(call: string): MpiError | null {
    return this.isInter
      ? new MpiError(ErrorClass.ERR_COMM, `${call}: ${this.name} is an intercommunicator`)
      : null;
  }

  private derived(cid: number, procs: readonly Proc[], rank: number, name: string): Communicator {
    const c = new Communicator(this.host, cid, procs, rank, name);
    c.errhandler = this.errhandler;
    return c;
  }

  /** Both sides of an intercommunicator take the larger of their agreed context ids. */
  private async agreeAcross(localCid: number): Promise<number> {
    let info: Int32Array | null = null;
    if (this.rank === 0) {
      const theirs = (await this.coll.sendrecv(
        new Int32Array([localCid]),
        0,
        MERGE_TAG,
        0,
        MERGE_TAG,
      )) as Int32Array;
      info = new Int32Array([Math.max(localCid, theirs[0]!)]);
    }
    const [cid] = await baseBcast(this.local, 0, info);
    this.host.contexts.nextCid = Math.max(this.host.contexts.nextCid, cid! + 1);
    return cid!;
  }

  /** @internal */
  engineOf(): Engine {
    return this.host.engine;
  }

  // ---- errors ------------------------------------------------------------------------------

  /** @internal Applies the error handler; returns the error for the caller to throw. */
  raiseSync(error: unknown, call: string): MpiError {
    const err = toMpiError(error);
    const h = this.errhandler;
    if (h === ERRORS_ARE_FATAL) this.host.fatal(this, err, call);
    else if (h.fn) h.fn(this, err);
    return err;
  }

  private fail<T>(error: unknown, call: string): Promise<T> {
    return Promise.reject(this.raiseSync(error, call));
  }

  private badRank(rank: number, what: string): MpiError | null {
    if (Number.isInteger(rank) && rank >= 0 && rank < this.remote.length) return null;
    return new MpiError(
      ErrorClass.ERR_RANK,
      `invalid ${what} rank ${String(rank)}: ${this.name} has ${this.isInter ? 'remote ' : ''}ranks 0-${this.remote.length - 1}` +
        `${what === 'source' ? ', ANY_SOURCE' : ''} and PROC_NULL`,
    );
  }

  private checkDest(dest: number): MpiError | null {
    if (this.freed) return this.freedError();
    return dest === PROC_NULL ? null : this.badRank(dest, 'destination');
  }

  private checkSource(source: number): MpiError | null {
    if (this.freed) return this.freedError();
    return source === ANY_SOURCE || source === PROC_NULL ? null : this.badRank(source, 'source');
  }

  private freedError(): MpiError {
    return new MpiError(ErrorClass.ERR_COMM, `${this.name} has been freed`);
  }

  private checkTag(tag: number, receive: boolean): MpiError | null {
    if (Number.isInteger(tag) && tag >= 0 && tag <= this.host.maxTag) return null;
    if (receive && tag === ANY_TAG) return null;
    return new MpiError(
      ErrorClass.ERR_TAG,
      `invalid tag ${String(tag)}: tags are integers 0-${this.host.maxTag}` +
        `${receive ? ' or ANY_TAG' : ''}`,
    );
  }

  private checkInto(into: unknown): MpiError | null {
    return isBufferLike(into)
      ? null
      : new MpiError(
          ErrorClass.ERR_BUFFER,
          `the receive buffer must be a typed array, Buffer or DataView; to receive any value ` +
            `use comm.recv(source, tag)`,
        );
  }

  // ---- request building ---------------------------------------------------------------------

  private fillSend(
    req: RpiRequest,
    type: ReqTypeValue,
    bytes: Uint8Array,
    kind: number,
    dest: number,
    tag: number,
  ): void {
    const proc = this.remote[dest]!;
    req.type = type;
    req.marks = ReqMark.SOURCE;
    req.flags = 0;
    req.buf = bytes;
    req.kind = kind;
    req.rank = dest;
    req.tag = tag;
    req.cid = this.cid;
    req.myRank = this.rank;
    req.proc = proc;
    req.seq = proc.sendSeq = (proc.sendSeq + 1) >>> 0;
  }

  private fillRecv(
    req: RpiRequest,
    type: ReqTypeValue,
    buf: Uint8Array | null,
    kind: number,
    source: number,
    tag: number,
  ): void {
    req.type = type;
    req.marks = ReqMark.DEST;
    req.flags = 0;
    req.buf = buf;
    req.kind = kind;
    req.rank = source;
    req.tag = tag;
    req.cid = this.cid;
    req.myRank = this.rank;
    req.proc = source === ANY_SOURCE ? null : this.remote[source]!;
    req.seq = 0;
  }

  /** Runs a filled blocking request to completion; resolves with it (still to be released). */
  private runBlocking(req: RpiRequest): Promise<RpiRequest> {
    const engine = this.host.engine;
    req.marks |= ReqMark.BLKTYPE;
    engine.build(req);
    req.onDone = null;
    req.flags = ReqFlag.BLOCK;
    engine.start(req);
    if (req.state === ReqState.DONE) return Promise.resolve(req);
    return new Promise<RpiRequest>((resolve) => {
      req.onDone = resolve;
    });
  }

  private finishBlocking(req: RpiRequest): MpiError | null {
    const engine = this.host.engine;
    const err = req.error;
    engine.destroy(req);
    engine.release(req);
    return err;
  }

  private statusOf(req: RpiRequest, elementBytes: number): Status {
    const st = new Status();
    st.source = req.stSource;
    st.tag = req.stTag;
    st.byteLength = req.stLength;
    st.kind = req.stKind;
    st.cancelled = req.cancelled;
    st.elementBytes = elementBytes;
    st.error = req.error;
    return st;
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
    const engine = this.host.engine;
    if (!engine.gate.open) {
      return engine.gate.deferPromise(() => this.blockingSend(mode, data, dest, tag));
    }
    const bad = this.checkDest(dest) ?? this.checkTag(tag, false);
    if (bad) return this.fail(bad, mode);
    if (dest === PROC_NULL) return RESOLVED;
    let bytes: Uint8Array;
    let kind: number;
    if (isBufferLike(data)) {
      kind = kindOf(data);
      bytes = data instanceof Uint8Array ? data : bytesOf(data);
    } else {
      try {
        ({ bytes, kind } = encodeValue(data));
      } catch (err) {
        return this.fail(err, mode);
      }
    }
    if (mode === 'bsend') {
      try {
        this.launchBuffered(bytes, kind, dest, tag);
      } catch (err) {
        return this.fail(err, mode);
      }
      return RESOLVED;
    }
    const req = engine.acquire();
    this.fillSend(req, MODE_TYPE[mode], bytes, kind, dest, tag);
    const a = engine.actions;
    if (
      mode !== 'ssend' &&
      engine.fast &&
      engine.activeCount === 0 &&
      req.proc !== engine.myProc &&
      a.fastsend?.(req)
    ) {
      engine.release(req);
      return RESOLVED;
    }
    return this.runBlocking(req).then((r) => {
      const err = this.finishBlocking(r);
      if (err) return this.fail(err, mode);
    });
  }

  /** Copies a message into the attached buffer and starts its transmission. */
  private launchBuffered(bytes: Uint8Array, kind: number, dest: number, tag: number): void {
    const buffer = this.host.bsendBuffer();
    if (!buffer) {
      throw new MpiError(
        ErrorClass.ERR_BUFFER,
        'buffered send without an attached buffer; call mpi.attachBuffer(size) first ' +
          `(size = sum of message sizes + BSEND_OVERHEAD each)`,
      );
    }
    const length = bytes.byteLength;
    const offset = buffer.allocate(length);
    const region = buffer.memory.subarray(offset, offset + length);
    region.set(bytes);
    const engine = this.host.engine;
    const req = engine.acquire();
    this.fillSend(req, ReqType.BSEND, region, kind, dest, tag);
    req.marks |= ReqMark.DYNBUF;
    req.onDone = (r) => {
      if (r.error) engine.verbose(0, `buffered send to rank ${dest} failed: ${r.error.message}`);
      engine.destroy(r);
      engine.release(r);
      buffer.release(offset, length);
    };
    engine.build(req);
    engine.start(req);
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
    return this.makeSend('sendInit', 'send', data, dest, tag, true) as PersistentRequest<Status>;
  }
  /** Persistent buffered-mode send (`MPI_Bsend_init`). */
  bsendInit(data: unknown, dest: number, tag = 0): PersistentRequest<Status> {
    return this.makeSend('bsendInit', 'bsend', data, dest, tag, true) as PersistentRequest<Status>;
  }
  /** Persistent synchronous-mode send (`MPI_Ssend_init`). */
  ssendInit(data: unknown, dest: number, tag = 0): PersistentRequest<Status> {
    return this.makeSend('ssendInit', 'ssend', data, dest, tag, true) as PersistentRequest<Status>;
  }
  /** Persistent ready-mode send (`MPI_Rsend_init`). */
  rsendInit(data: unknown, dest: number, tag = 0): PersistentRequest<Status> {
    return this.makeSend('rsendInit', 'rsend', data, dest, tag, true) as PersistentRequest<Status>;
  }

  private startSend(
    call: string,
    mode: SendMode,
    data: unknown,
    dest: number,
    tag: number,
  ): Request<Status> {
    const r = this.makeSend(call, mode, data, dest, tag, false);
    this.startRequest(r);
    return r;
  }

  private makeSend(
    call: string,
    mode: SendMode,
    data: unknown,
    dest: number,
    tag: number,
    persistent: boolean,
  ): Request<Status> {
    const bad = this.checkDest(dest) ?? this.checkTag(tag, false);
    if (bad) throw this.raiseSync(bad, call);
    const engine = this.host.engine;
    const buffer = isBufferLike(data);
    let bytes: Uint8Array | null = buffer ? bytesOf(data) : null;
    const kind = buffer ? kindOf(data) : DataKind.OBJECT;
    let rreq: RpiRequest | null = null;
    const encode = (): Uint8Array => {
      // Objects are encoded at every start: a persistent request sends the current value.
      if (bytes !== null && buffer) return bytes;
      bytes = encodeValue(data).bytes;
      return bytes;
    };
    const op: RequestOp = {
      object: false,
      elementBytes: 0,
      immediateStatus: () => (dest === PROC_NULL ? procNullStatus() : new Status()),
      destroy: (r) => engine.destroy(r),
      launch: () => {
        if (dest === PROC_NULL) return null;
        const payload = encode();
        if (mode === 'bsend') {
          this.launchBuffered(payload, kind, dest, tag);
          return null;
        }
        if (rreq === null) {
          rreq = new RpiRequest();
          this.fillSend(rreq, MODE_TYPE[mode], payload, kind, dest, tag);
          if (persistent) rreq.marks |= ReqMark.PERSIST;
          engine.build(rreq);
        } else {
          rreq.buf = payload;
          const proc = rreq.proc!;
          rreq.seq = proc.sendSeq = (proc.sendSeq + 1) >>> 0;
        }
        const r = rreq;
        if (!persistent) rreq = null;
        engine.start(r);
        return r;
      },
    };
    return persistent ? new PersistentRequest(this, call, op, true) : new Request(this, call, op);
  }

  /** Starts a request, now or (checkpoint in progress) when the entry gate opens. */
  private startRequest(r: Request<unknown>, call = r.callName): void {
    const engine = this.host.engine;
    try {
      if (engine.gate.open) r.begin();
      else {
        // The request is active from the caller's point of view; the rpi sees it later.
        r.pend();
        engine.gate.defer(() => {
          try {
            r.begin();
          } catch (err) {
            this.raiseSync(err, call);
          }
        });
      }
    } catch (err) {
      throw this.raiseSync(err, call);
    }
  }

  /** @internal `PersistentRequest.start`. */
  startPersistent(r: PersistentRequest<unknown>): void {
    this.startRequest(r, 'start');
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
   * `source` defaults to ANY_SOURCE, `tag` to ANY_TAG.
   */
  recv(into: BufferLike, source?: number, tag?: number): Promise<Status>;
  recv<T = unknown>(source?: number, tag?: number, status?: Status): Promise<T>;
  recv(
    a?: BufferLike | number,
    b?: number | Status,
    c?: number | Status,
  ): Promise<Status> | Promise<unknown> {
    if (isBufferLike(a))
      return this.recvInto(a, (b as number) ?? ANY_SOURCE, (c as number) ?? ANY_TAG);
    return this.recvValue(a ?? ANY_SOURCE, (b as number) ?? ANY_TAG, c as Status | undefined);
  }

  private recvInto(into: BufferLike, source: number, tag: number): Promise<Status> {
    const engine = this.host.engine;
    if (!engine.gate.open) return engine.gate.deferPromise(() => this.recvInto(into, source, tag));
    const bad = this.checkSource(source) ?? this.checkTag(tag, true);
    if (bad) return this.fail(bad, 'recv');
    if (source === PROC_NULL) return Promise.resolve(procNullStatus());
    const kind = kindOf(into);
    const elementBytes = elementSize(kind);
    const req = engine.acquire();
    this.fillRecv(
      req,
      ReqType.RECV,
      into instanceof Uint8Array ? into : bytesOf(into),
      kind,
      source,
      tag,
    );
    const a = engine.actions;
    if (
      engine.fast &&
      engine.activeCount === 0 &&
      source !== ANY_SOURCE &&
      req.proc !== engine.myProc &&
      a.fastrecv?.(req)
    ) {
      const st = this.statusOf(req, elementBytes);
      const err = req.error;
      engine.release(req);
      return err ? this.fail(err, 'recv') : Promise.resolve(st);
    }
    return this.runBlocking(req).then((r) => {
      const st = this.statusOf(r, elementBytes);
      const err = this.finishBlocking(r);
      return err ? this.fail<Status>(err, 'recv') : st;
    });
  }

  private recvValue(source: number, tag: number, status?: Status): Promise<unknown> {
    const engine = this.host.engine;
    if (!engine.gate.open) {
      return engine.gate.deferPromise(() => this.recvValue(source, tag, status));
    }
    const bad = this.checkSource(source) ?? this.checkTag(tag, true);
    if (bad) return this.fail(bad, 'recv');
    if (source === PROC_NULL) {
      if (status) Object.assign(status, procNullStatus());
      return Promise.resolve(undefined);
    }
    const req = engine.acquire();
    this.fillRecv(req, ReqType.RECV, null, DataKind.OBJECT, source, tag);
    const finish = (r: RpiRequest): unknown => {
      if (status) Object.assign(status, this.statusOf(r, 0));
      let err = r.error;
      let value: unknown;
      if (!err) {
        try {
          value = decodeValue(r.buf ?? new Uint8Array(0), r.stKind);
        } catch (e) {
          err = e as MpiError;
        }
      }
      return err ? err : value;
    };
    const a = engine.actions;
    if (
      engine.fast &&
      engine.activeCount === 0 &&
      source !== ANY_SOURCE &&
      req.proc !== engine.myProc &&
      a.fastrecv?.(req)
    ) {
      const out = finish(req);
      engine.release(req);
      return out instanceof MpiError ? this.fail(out, 'recv') : Promise.resolve(out);
    }
    return this.runBlocking(req).then((r) => {
      const out = finish(r);
      this.finishBlocking(r);
      return out instanceof MpiError ? this.fail(out, 'recv') : out;
    });
  }

  /**
   * Non-blocking receive (`MPI_Irecv`): `irecv(into, source?, tag?)` resolves `wait()` with the
   * Status; `irecv(source?, tag?)` with the received value (`req.status` has the status).
   */
  irecv(into: BufferLike, source?: number, tag?: number): Request<Status>;
  irecv<T = unknown>(source?: number, tag?: number): Request<T>;
  irecv(a?: BufferLike | number, b?: number, c?: number): Request<unknown> {
    const r = this.makeRecv('irecv', a, b, c, false);
    this.startRequest(r);
    return r;
  }

  /** Persistent receive (`MPI_Recv_init`), into a buffer or of any value. */
  recvInit(into: BufferLike, source?: number, tag?: number): PersistentRequest<Status>;
  recvInit<T = unknown>(source?: number, tag?: number): PersistentRequest<T>;
  recvInit(a?: BufferLike | number, b?: number, c?: number): PersistentRequest<unknown> {
    return this.makeRecv('recvInit', a, b, c, true) as PersistentRequest<unknown>;
  }

  private makeRecv(
    call: string,
    a: BufferLike | number | undefined,
    b: number | undefined,
    c: number | undefined,
    persistent: boolean,
  ): Request<unknown> {
    const into = isBufferLike(a) ? a : null;
    const source = (into ? b : (a as number | undefined)) ?? ANY_SOURCE;
    const tag = (into ? c : b) ?? ANY_TAG;
    const bad = this.checkSource(source) ?? this.checkTag(tag, true);
    if (bad) throw this.raiseSync(bad, call);
    const engine = this.host.engine;
    const kind = into ? kindOf(into) : DataKind.OBJECT;
    const bytes = into ? bytesOf(into) : null;
    let rreq: RpiRequest | null = null;
    const op: RequestOp = {
      object: into === null,
      elementBytes: into ? elementSize(kind) : 0,
      immediateStatus: procNullStatus,
      destroy: (r) => engine.destroy(r),
      launch: () => {
        if (source === PROC_NULL) return null;
        if (rreq === null) {
          rreq = new RpiRequest();
          this.fillRecv(rreq, ReqType.RECV, bytes, kind, source, tag);
          if (persistent) rreq.marks |= ReqMark.PERSIST;
          engine.build(rreq);
        } else {
          rreq.buf = bytes;
          rreq.proc = source === ANY_SOURCE ? null : this.remote[source]!;
        }
        const r = rreq;
        if (!persistent) rreq = null;
        engine.start(r);
        return r;
      },
    };
    return persistent ? new PersistentRequest(this, call, op, true) : new Request(this, call, op);
  }

  // ---- probe -------------------------------------------------------------------------------

  /**
   * Non-blocking probe (`MPI_Iprobe`): the Status of a matching message that has arrived (not
   * received), or undefined. `status.count` is in the sender's element type.
   */
  iprobe(source: number = ANY_SOURCE, tag: number = ANY_TAG): Status | undefined {
    const bad = this.checkSource(source) ?? this.checkTag(tag, true);
    if (bad) throw this.raiseSync(bad, 'iprobe');
    if (source === PROC_NULL) return procNullStatus();
    const engine = this.host.engine;
    if (!engine.gate.open) return undefined;
    const req = engine.acquire();
    this.fillRecv(req, ReqType.PROBE, null, DataKind.OBJECT, source, tag);
    const found = engine.actions.iprobe(req);
    const st = found ? this.statusOf(req, 0) : undefined;
    engine.release(req);
    return st;
  }

  /** Blocking probe (`MPI_Probe`): waits until a matching message has arrived. */
  async probe(source: number = ANY_SOURCE, tag: number = ANY_TAG): Promise<Status> {
    const engine = this.host.engine;
    if (!engine.gate.open) await engine.gate.deferPromise(() => RESOLVED);
    for (;;) {
      const st = this.iprobe(source, tag);
      if (st) return st;
      await engine.nextArrival();
    }
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
    into: BufferLike,
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
  async sendrecv(
    data: unknown,
    dest: number,
    sendTag = 0,
    d?: BufferLike | number,
    e?: number,
    f?: number | Status,
  ): Promise<unknown> {
    if (isBufferLike(d)) {
      const r = this.irecv(d, e ?? ANY_SOURCE, (f as number | undefined) ?? ANY_TAG);
      const s = this.isend(data, dest, sendTag);
      const [st] = await Promise.all([r.wait(), s.wait()]);
      return st;
    }
    const r = this.irecv(d ?? ANY_SOURCE, e ?? ANY_TAG);
    const s = this.isend(data, dest, sendTag);
    const [value] = await Promise.all([r.wait(), s.wait()]);
    if (f instanceof Status && r.status) Object.assign(f, r.status);
    return value;
  }

  /**
   * Send the contents of `buf` and receive into the same buffer (`MPI_Sendrecv_replace`).
   */
  async sendrecvReplace(
    buf: BufferLike,
    dest: number,
    sendTag = 0,
    source: number = ANY_SOURCE,
    recvTag: number = ANY_TAG,
  ): Promise<Status> {
    const err = this.checkInto(buf);
    if (err) return this.fail(err, 'sendrecvReplace');
    const bytes = bytesOf(buf);
    const copy = Buffer.allocUnsafeSlow(bytes.byteLength);
    copy.set(bytes);
    const kind = kindOf(buf);
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
