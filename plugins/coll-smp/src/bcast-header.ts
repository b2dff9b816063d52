import type { CollRequest } from '@ssi/mpi';
import { ErrorClass, MpiError } from '@ssi/mpi';
import { binomialTree } from './binomial';
import type { Hierarchy } from './hierarchy';
import { Tag } from './tags';

/** The header's bytes: the root's length, a float64 (exact up to 2^53). */
const HEADER = 8;

/** Per served communicator: the buffer headers are received into and sent from. */
const staging = new WeakMap<Hierarchy, Uint8Array>();

function stagingOf(h: Hierarchy, inlineMax: number): Uint8Array {
  let s = staging.get(h);
  if (s === undefined || s.length < HEADER + inlineMax) {
    s = new Uint8Array(HEADER + inlineMax);
    staging.set(h, s);
  }
  return s;
}

/** What a rank learned from the root before any data moved. */
export interface BcastHeader {
  /** The root's buffer length in bytes: every rank moves this many. */
  length: number;
  /** True when the data came with the header (below `inlineMax`): the call is done. */
  carried: boolean;
}

/**
 * The first step of smp's bcast on every rank: the root's length (and its data, when shorter than
 * `inlineMax`) goes down the leaders' binomial tree and from the root, or each other node's
 * leader, to the rest of its node. Every rank then knows the root's length, so all of them take
 * the same path for the data and move the same pieces, whatever length each passed: an erroneous
 * program with buffers of different lengths gets `ERR_TRUNCATE` where a buffer is too short
 * (`truncation`), instead of ranks choosing different paths by their own lengths and waiting
 * for messages that never come. Carried data is copied into `buf` as far as it fits.
 */
export async function spreadHeader(
  h: Hierarchy,
  buf: Uint8Array,
  root: number,
  inlineMax: number,
): Promise<BcastHeader> {
  const { loc, local, leaders } = h;
  const stage = stagingOf(h, inlineMax);
  const view = new DataView(stage.buffer, stage.byteOffset, HEADER);
  const rootNode = loc.nodeOf(root);
  const writer = loc.node === rootNode ? loc.localRanks.indexOf(root) : 0;
  const isRoot = local.rank === writer && loc.node === rootNode;
  let message: Uint8Array;
  if (isRoot) {
    view.setFloat64(0, buf.length, true);
    if (buf.length < inlineMax) stage.set(buf, HEADER);
    message = stage.subarray(0, HEADER + (buf.length < inlineMax ? buf.length : 0));
  } else {
    // The root's node hears it from the root; another node's leader from its parent leader, and
    // the rest of that node from the leader.
    const fromLeader = local.rank === 0 && loc.node !== rootNode;
    const status = fromLeader
      ? await leaders!.coll.recv(
          stage,
          binomialTree(leaders!.rank, rootNode, leaders!.size).parent,
          Tag.BCAST_HEADER,
        )
      : await local.coll.recv(stage, writer, Tag.BCAST_HEADER);
    message = stage.subarray(0, status.byteLength);
  }
  const length = view.getFloat64(0, true);
  const carried = length < inlineMax;
  const sends: CollRequest[] = [];
  if (leaders) {
    const { children } = binomialTree(leaders.rank, rootNode, leaders.size);
    for (const c of children.reverse())
      sends.push(leaders.coll.isend(message, c, Tag.BCAST_HEADER));
  }
  if (local.rank === writer) {
    for (let r = 0; r < local.size; r++) {
      if (r !== writer) sends.push(local.coll.isend(message, r, Tag.BCAST_HEADER));
    }
  }
  if (carried && !isRoot) {
    buf.set(message.subarray(HEADER, HEADER + Math.min(length, buf.length)));
  }
  // The next call reuses the staging buffer: every send from it must be out first.
  for (const s of sends) await s.wait();
  return { length, carried };
}

/**
 * The error of a rank whose buffer is shorter than the root's (after it took part in the whole
 * call with the root's length, so no other rank waits for it), or null.
 */
export function truncation(
  comm: string,
  have: number,
  root: number,
  length: number,
): MpiError | null {
  if (have >= length) return null;
  return new MpiError(
    ErrorClass.ERR_TRUNCATE,
    `smp: bcast on ${comm}: the root (rank ${root}) sent ${length} bytes, this rank's buffer holds ${have} (buffers of different lengths)`,
  );
}
