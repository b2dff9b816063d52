import { baseAllgather, baseMax } from './coll/base-exchange';
import type { Communicator } from './comm';
import { CONGRUENT, type Comparison, IDENT, SIMILAR, UNDEFINED, UNEQUAL } from './constants';
import { ErrorClass, MpiError } from './errors';
import type { Group } from './group';
import type { Proc } from './proc';

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
