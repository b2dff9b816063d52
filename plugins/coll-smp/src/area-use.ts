import { MIN } from '@ssi/mpi';
import type { Hierarchy } from './hierarchy';
import { bytesOf, NodeArea } from './node-area';
import type { SmpSettings } from './params';

/**
 * Bytes of the bcast ring: a writer may run this far ahead of the slowest reader of its node
 * (two broadcasts of 4 MiB in flight; with smaller pieces, more of them).
 */
const RING_BYTES = 8 << 20;

/** Slots of the bcast ring for pieces of `chunk` bytes: at least two. */
export const ringSlots = (chunk: number) => Math.max(2, Math.floor(RING_BYTES / chunk));

/** Per served communicator: its nodes' area once opened, or why there is none. */
const areas = new WeakMap<Hierarchy, NodeArea | string>();

/**
 * The node area of `h` for a reduction of `bytes` bytes (the same on every rank: the lengths
 * were agreed first), or null when the call takes the sub-communicator path: a buffer below
 * `coll_smp_shm_min_bytes`, or no area (`openArea`).
 */
export async function areaFor(
  h: Hierarchy,
  s: SmpSettings,
  bytes: number,
  note: (message: string) => void,
): Promise<NodeArea | null> {
  if (bytes < s.shmMinBytes) return null;
  return openArea(h, s, note);
}

/**
 * `h`'s nodes' area once `openArea` opened it, null without one, undefined before: read at once,
 * so that a call after the first spends no promise hop on it.
 */
export function areaOpened(h: Hierarchy, s: SmpSettings): NodeArea | null | undefined {
  if (!s.shm) return null;
  const area = areas.get(h);
  return typeof area === 'string' ? null : area;
}

/**
 * `h`'s nodes' area, or null without one (`coll_smp_shm 0`, or some node has none). Opened by the
 * first call that wants it (collective: every rank of the communicator makes that call, so all
 * arrive here together), then kept until the communicator is freed. Every node must agree,
 * because the pieces cross between leaders in the area's slot size: a `MIN` over the
 * communicator decides.
 */
export async function openArea(
  h: Hierarchy,
  s: SmpSettings,
  note: (message: string) => void,
): Promise<NodeArea | null> {
  if (!s.shm) return null;
  let area = areas.get(h);
  if (area !== undefined) return typeof area === 'string' ? null : area;
  if (area === undefined) {
    const shape = {
      chunk: s.shmChunkBytes,
      ring: ringSlots(s.shmChunkBytes),
      ranks: h.local.size,
      singleCopy: s.shmSingleCopy,
    };
    area = await NodeArea.open(h.local, shape);
    // [0]: every node has an area; [1]: every node stripes large bcasts (`bcast-striped.ts`).
    const k = h.local.size;
    const even = h.loc.nodes.every((n) => n.length === k);
    const cross = typeof area !== 'string' && area.cross !== null;
    const stripes = s.bcastStripeMinBytes > 0 && even && cross;
    const ok = new Int32Array([typeof area === 'string' ? 0 : 1, stripes ? 1 : 0]);
    await h.flat.allreduce(ok, MIN, ok);
    if (typeof area !== 'string') area.stripes = ok[1] === 1;
    if (ok[0] === 0 && typeof area !== 'string') {
      area.close();
      area = 'another node has no shared area';
    }
    note(
      typeof area === 'string'
        ? `smp: no shared area, the sub-communicators move the data: ${area}`
        : `smp: node ${h.loc.node} shares an area of ${bytesOf(shape)} bytes (pieces of ${shape.chunk}${area.cross ? ', bcast by single copy' : ''}${area.stripes ? ', striped between nodes' : ''})`,
    );
    areas.set(h, area);
  }
  return typeof area === 'string' ? null : area;
}

/** Closes `h`'s area (from the communicator's free). */
export function closeArea(h: Hierarchy): void {
  const area = areas.get(h);
  if (area !== undefined && typeof area !== 'string') area.close();
  areas.delete(h);
}
