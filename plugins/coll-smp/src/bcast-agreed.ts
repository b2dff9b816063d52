import { bcastHierarchical } from './bcast';
import { bcastThroughArea } from './bcast-area';
import { spreadHeader, truncation } from './bcast-header';
import { bcastPipelined } from './bcast-pipeline';
import type { Hierarchy } from './hierarchy';
import type { NodeArea } from './node-area';
import type { SmpSettings } from './params';

/**
 * smp's bcast: every rank learns the root's length from its first message, takes the path the
 * root's length chose and moves that length. Through the nodes' areas when every node has one
 * (opened at the first bcast): a buffer below `wholeBelow` as one message per level, larger ones
 * in pieces whose heads carry the length (`bcast-area.ts`). Otherwise (`coll_smp_shm 0`, or a
 * node without an area) the length goes first (`spreadHeader`, which carries buffers below
 * `wholeBelow` whole), then the sub-communicators move the rest. A rank whose buffer is shorter than the root's gets
 * ERR_TRUNCATE once it has done its part, and its buffer is written only as far as it reaches.
 */
export async function bcastAgreed(
  h: Hierarchy,
  s: SmpSettings,
  /** The communicator, for an error's message (its name is read only then). */
  comm: { readonly name: string },
  buf: Uint8Array,
  root: number,
  area: NodeArea | null,
): Promise<void> {
  let length: number;
  if (area) {
    length = await bcastThroughArea(
      h,
      area,
      buf,
      root,
      inlineLimit(s, area),
      s.bcastStripeMinBytes,
    );
  } else {
    const header = await spreadHeader(h, buf, root, wholeBelow(s));
    length = header.length;
    if (!header.carried) await bcastLevels(h, s, buf, root, length);
  }
  if (buf.length < length) throw truncation(comm.name, buf.length, root, length)!;
}

/**
 * Below this root length the data travels whole, one message per level (the leaders' tree, then
 * each node): `coll_smp_shm_min_bytes`, or `coll_smp_bcast_min_bytes` where that is larger.
 */
const wholeBelow = (s: SmpSettings) => Math.max(s.shmMinBytes, s.bcastMinBytes);

/**
 * `wholeBelow` through the areas: at most one piece, so that another node's leader can receive
 * such a message where a piece goes.
 */
const inlineLimit = (s: SmpSettings, area: NodeArea) => Math.min(wholeBelow(s), area.shape.chunk);

/** The sub-communicators' bcast of the root's `length` bytes, into a buffer of that length. */
async function bcastLevels(
  h: Hierarchy,
  s: SmpSettings,
  buf: Uint8Array,
  root: number,
  length: number,
): Promise<void> {
  const into = buf.length >= length ? buf.subarray(0, length) : new Uint8Array(length);
  if (s.bcastSegmentBytes > 0 && length > s.bcastSegmentBytes) {
    await bcastPipelined(h, into, root, s.bcastSegmentBytes);
  } else await bcastHierarchical(h, into, root);
  if (into.buffer !== buf.buffer) buf.set(into.subarray(0, buf.length));
}
