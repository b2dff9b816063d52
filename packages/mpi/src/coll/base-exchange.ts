import type { Communicator } from '../comm';

/**
 * Tags on `comm.coll` at and above this value belong to the framework base (context-id
 * agreement, split); coll modules use tags below it.
 */
export const BASE_TAG = 0x7fff0000;
const GATHER_TAG = BASE_TAG + 1;
const SPREAD_TAG = BASE_TAG + 2;

/**
 * Every member's `mine` (same length everywhere), in rank order, at every member: a linear
 * gather to rank 0 and a linear spread, on point-to-point only. The framework needs it before
 * (and independently of) any coll module: context-id agreement and split run through it.
 */
export async function baseAllgather(comm: Communicator, mine: Int32Array): Promise<Int32Array> {
  const c = comm.coll;
  const k = mine.length;
  const all = new Int32Array(k * c.size);
  if (c.rank === 0) {
    all.set(mine, 0);
    for (let r = 1; r < c.size; r++) await c.recv(all.subarray(r * k, (r + 1) * k), r, GATHER_TAG);
    for (let r = 1; r < c.size; r++) await c.send(all, r, SPREAD_TAG);
  } else {
    await c.send(mine, 0, GATHER_TAG);
    await c.recv(all, 0, SPREAD_TAG);
  }
  return all;
}

/** The largest `value` of all members. */
export async function baseMax(comm: Communicator, value: number): Promise<number> {
  const all = await baseAllgather(comm, new Int32Array([value]));
  return all.reduce((a, b) => Math.max(a, b), value);
}

const BCAST_TAG = BASE_TAG + 3;

/** The root's `data` (any length) at every member: a linear spread of length then values. */
export async function baseBcast(
  comm: Communicator,
  root: number,
  data: Int32Array | null,
): Promise<Int32Array> {
  const c = comm.coll;
  if (c.rank === root) {
    const msg = data ?? new Int32Array(0);
    for (let r = 0; r < c.size; r++) if (r !== root) await c.send(msg, r, BCAST_TAG);
    return msg;
  }
  const got = (await c.recv(root, BCAST_TAG)) as Int32Array;
  return got;
}
