import { bcastHierarchical } from './bcast';
import { bcastThroughArea } from './bcast-area';
import { spreadHeader, truncation } from './bcast-header';
import { bcastPipelined } from './bcast-pipeline';
import type { Hierarchy } from './hierarchy';
import type { NodeArea } from './node-area';
import type { SmpSettings } from './params';

/**
 * smp's bcast with `coll_smp_shm 1`: every rank learns the root's length before it moves data,
 * and moves that length. Through the nodes' areas when every node has one (opened at the first
 * bcast): the length is in the head of every piece (`bcast-area.ts`). Otherwise the length goes
 * first (`spreadHeader`, which carries buffers below `coll_smp_shm_min_bytes` whole), then the
 * sub-communicators move the rest. A rank whose buffer is shorter than the root's gets
 * ERR_TRUNCATE once it has done its part, and its buffer is written only as far as it reaches.
 */
export async function bcastAgreed(
  h: Hierarchy,
  s: SmpSettings,
  name: string,
  buf: Uint8Array,
  root: number,
  area: NodeArea | null,
): Promise<void> {
  let length: number;
  if (area) length = await bcastThroughArea(h, area, buf, root);
  else {
    const header = await spreadHeader(h, buf, root, s.shmMinBytes);
    length = header.length;
    if (!header.carried) await bcastLevels(h, s, buf, root, length);
  }
  const error = truncation(name, buf.length, root, length);
  if (error) throw error;
}

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
