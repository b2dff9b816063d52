import { BASE_TAG, baseAllgather, baseBcast, baseMax } from './coll/base-exchange';
import type { Communicator } from './comm';
import { badRank, intraOnly } from './comm-checks';
import {
  CID_SELF,
  CID_WORLD,
  CONGRUENT,
  type Comparison,
  IDENT,
  SIMILAR,
  UNDEFINED,
  UNEQUAL,
} from './constants';
import { ErrorClass, MpiError } from './errors';
import type { Group } from './group';
import type { Proc } from './proc';

/*
 * Communicator management (MPI-1 §5.4-5.6): the bodies of dup, split, create, the
 * intercommunicator calls and free. Each runs inside the parent's collective sequence (the
 * communicator's public method puts it there), so members agree on context ids in call order.
 */

const MERGE_TAG = BASE_TAG + 10;

/** What communicator construction needs from the MPI instance. */
export interface ContextSource {
  /** The smallest context id this process has not used yet. */
  nextCid: number;
}

/**
 * A context id no member of `parent` uses yet: each proposes its next free id, all take the
 * largest, each moves its counter past it. Ids only grow, so the agreed one is free everywhere
 * (cid collisions between communicators are impossible, whatever was freed).
 */
export async function agreeOnCid(parent: Communicator, source: ContextSource): Promise<number> {
  const cid = await baseMax(parent, source.nextCid);
  source.nextCid = cid + 1;
  return cid;
}

/** `MPI_Comm_split`: members with one colour form a communicator, ordered by (key, old rank). */
export async function splitMembers(
  parent: Communicator,
  color: number,
  key: number,
): Promise<Proc[] | null> {
  const pairs = await baseAllgather(parent, new Int32Array([color, key]));
  if (color === UNDEFINED) return null;
  const members: { rank: number; key: number }[] = [];
  for (let r = 0; r < parent.size; r++) {
    if (pairs[2 * r] === color) members.push({ rank: r, key: pairs[2 * r + 1]! });
  }
  members.sort((a, b) => a.key - b.key || a.rank - b.rank);
  return members.map((m) => parent.procs[m.rank]!);
}

/** Checks that split's arguments agree with MPI: integers, colour >= 0 or UNDEFINED. */
export function checkSplitArgs(color: number, key: number): MpiError | null {
  if (!Number.isInteger(color) || (color < 0 && color !== UNDEFINED)) {
    return new MpiError(
      ErrorClass.ERR_ARG,
      `split: colour ${String(color)} must be a non-negative integer or UNDEFINED`,
    );
  }
  if (!Number.isInteger(key) || Math.abs(key) > 0x7fffffff) {
    return new MpiError(ErrorClass.ERR_ARG, `split: key ${String(key)} must be a 32-bit integer`);
  }
  return null;
}

/** `MPI_Comm_create`: `group` must be a subset of `parent`'s group. */
export function checkSubgroup(parent: Communicator, group: Group): MpiError | null {
  const mine = new Set(parent.procs);
  if (group.procs.every((p) => mine.has(p))) return null;
  return new MpiError(
    ErrorClass.ERR_GROUP,
    `create: the group has processes that are not in ${parent.name}`,
  );
}

/** `MPI_Comm_compare`. */
export function compareComms(a: Communicator, b: Communicator): Comparison {
  if (a === b) return IDENT;
  if (a.cid === b.cid && sameOrder(a.procs, b.procs) && sameOrder(a.remote, b.remote)) return IDENT;
  if (a.isInter !== b.isInter) return UNEQUAL;
  if (sameOrder(a.procs, b.procs) && sameOrder(a.remote, b.remote)) return CONGRUENT;
  if (sameSet(a.procs, b.procs) && sameSet(a.remote, b.remote)) return SIMILAR;
  return UNEQUAL;
}

function sameOrder(a: readonly Proc[], b: readonly Proc[]): boolean {
  return a.length === b.length && a.every((p, i) => b[i] === p);
}

function sameSet(a: readonly Proc[], b: readonly Proc[]): boolean {
  const s = new Set(b);
  return a.length === b.length && a.every((p) => s.has(p));
}

/** `MPI_Comm_dup`: same group, new context; attributes copied as their keys say. */
export async function dupComm(comm: Communicator, name: string): Promise<Communicator> {
  const contexts = comm.host.contexts;
  const cid = await agreeOnCid(comm.isInter ? comm.local : comm, contexts);
  const cidAll = comm.isInter ? await agreeAcross(comm, cid) : cid;
  const c = comm.derive(cidAll, comm.procs, comm.rank, name, comm.remote);
  comm.attributes.copyInto(comm, c.attributes);
  c.topology = comm.topology; // the topology survives dup (MPI-1 §6.2); it is immutable
  return c;
}

/** `MPI_Comm_split`: null where the colour is UNDEFINED. */
export async function splitComm(
  comm: Communicator,
  color: number,
  key: number,
  name: string | undefined,
): Promise<Communicator | null> {
  const bad = intraOnly(comm, 'split') ?? checkSplitArgs(color, key);
  if (bad) throw bad;
  const members = await splitMembers(comm, color, key);
  const cid = await agreeOnCid(comm, comm.host.contexts);
  if (!members) return null;
  const me = comm.procs[comm.rank]!;
  return comm.derive(cid, members, members.indexOf(me), name ?? `${comm.name}.split(${color})`);
}

/** `MPI_Comm_create`: null where this process is not in `group`. */
export async function createComm(
  comm: Communicator,
  group: Group,
  name: string | undefined,
): Promise<Communicator | null> {
  const bad = intraOnly(comm, 'create') ?? checkSubgroup(comm, group);
  if (bad) throw bad;
  const cid = await agreeOnCid(comm, comm.host.contexts);
  if (group.rank === UNDEFINED) return null;
  return comm.derive(cid, group.procs, group.rank, name ?? `${comm.name}.create`);
}

/**
 * `MPI_Intercomm_create`: this communicator's group and the group of the process `remoteLeader`
 * of `peer` form an intercommunicator; the two leaders talk over `peer` with `tag`.
 */
export async function createIntercomm(
  comm: Communicator,
  localLeader: number,
  peer: Communicator,
  remoteLeader: number,
  tag: number,
  name: string | undefined,
): Promise<Communicator> {
  const bad = intraOnly(comm, 'createIntercomm') ?? badRank(comm, localLeader, 'local leader');
  if (bad) throw bad;
  const contexts = comm.host.contexts;
  const localMax = await baseMax(comm, contexts.nextCid);
  let info: Int32Array | null = null;
  if (comm.rank === localLeader) {
    const mine = new Int32Array([localMax, ...comm.procs.map((p) => p.gps.grank)]);
    const theirs = (await peer.sendrecv(mine, remoteLeader, tag, remoteLeader, tag)) as Int32Array;
    info = new Int32Array([Math.max(localMax, theirs[0]!), ...theirs.subarray(1)]);
  }
  const agreed = await baseBcast(comm, localLeader, info);
  const cid = agreed[0]!;
  contexts.nextCid = Math.max(contexts.nextCid, cid + 1);
  const byWorldRank = new Map(comm.host.engine.procs.map((p) => [p.gps.grank, p]));
  const remote = [...agreed.subarray(1)].map((g) => byWorldRank.get(g)!);
  return comm.derive(cid, comm.procs, comm.rank, name ?? `${comm.name}.intercomm`, remote);
}

/**
 * `MPI_Intercomm_merge`: both groups in one intracommunicator, the group that passes
 * `high = false` first (on a tie, the group whose first member has the lower world rank).
 */
export async function mergeIntercomm(
  comm: Communicator,
  high: boolean,
  name: string | undefined,
): Promise<Communicator> {
  if (!comm.isInter) {
    throw new MpiError(ErrorClass.ERR_COMM, `merge: ${comm.name} is not an intercommunicator`);
  }
  const local = comm.local;
  const contexts = comm.host.contexts;
  const localMax = await baseMax(local, contexts.nextCid);
  let info: Int32Array | null = null;
  if (comm.rank === 0) {
    const mine = new Int32Array([localMax, high ? 1 : 0]);
    const theirs = (await comm.coll.sendrecv(mine, 0, MERGE_TAG, 0, MERGE_TAG)) as Int32Array;
    const lowFirst =
      high === !!theirs[1] ? comm.procs[0]!.gps.grank < comm.remote[0]!.gps.grank : !high;
    info = new Int32Array([Math.max(localMax, theirs[0]!), lowFirst ? 1 : 0]);
  }
  const [cid, mineFirst] = await baseBcast(local, 0, info);
  contexts.nextCid = Math.max(contexts.nextCid, cid! + 1);
  const procs = mineFirst ? [...comm.procs, ...comm.remote] : [...comm.remote, ...comm.procs];
  const me = comm.procs[comm.rank]!;
  return comm.derive(cid!, procs, procs.indexOf(me), name ?? `${comm.name}.merge`);
}

/** Both sides of an intercommunicator take the larger of their agreed context ids. */
async function agreeAcross(comm: Communicator, localCid: number): Promise<number> {
  let info: Int32Array | null = null;
  if (comm.rank === 0) {
    const theirs = (await comm.coll.sendrecv(
      new Int32Array([localCid]),
      0,
      MERGE_TAG,
      0,
      MERGE_TAG,
    )) as Int32Array;
    info = new Int32Array([Math.max(localCid, theirs[0]!)]);
  }
  const [cid] = await baseBcast(comm.local, 0, info);
  const contexts = comm.host.contexts;
  contexts.nextCid = Math.max(contexts.nextCid, cid! + 1);
  return cid!;
}

/** `MPI_Comm_free`: predefined communicators cannot be freed. */
export function checkFreeable(comm: Communicator): MpiError | null {
  if (comm.cid !== CID_WORLD && comm.cid !== CID_SELF) return null;
  return new MpiError(ErrorClass.ERR_COMM, `free: ${comm.name} is predefined and cannot be freed`);
}
