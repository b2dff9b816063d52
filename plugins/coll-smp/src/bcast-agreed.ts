import { bcastHierarchical } from './bcast';
import { bcastThroughArea } from './bcast-area';
import { spreadHeader, truncation } from './bcast-header';
import { bcastPipelined } from './bcast-pipeline';
import type { Hierarchy } from './hierarchy';
import type { NodeArea } from './node-area';
import type { SmpSettings } from './params';

/**
 * smp's bcast where the nodes may have shared areas: the root's length first
 * (`spreadHeader`, which carries buffers below `coll_smp_shm_min_bytes` whole), then the data by
 * the path the root's length chooses, the same on every rank: through the areas, or through the
 * sub-communicators when some node has no area. Every rank moves the root's length; a rank whose
 * buffer is shorter gets ERR_TRUNCATE once the call is done everywhere, and its buffer is written
 * only as far as it reaches.
 */
export async function bcastAgreed(
  h: Hierarchy,
  s: SmpSettings,
  name: string,
  buf: Uint8Array,
  root: number,
  area: (bytes: number) => Promise<NodeArea | null>,
): Promise<void> {
  const { length, carried } = await spreadHeader(h, buf, root, s.shmMinBytes);
  if (!carried) {
    const shared = await area(length);
    if (shared) await bcastThroughArea(h, shared, buf, root, length);
    else await bcastLevels(h, s, buf, root, length);
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
