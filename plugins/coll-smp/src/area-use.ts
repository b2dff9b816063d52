import { MIN } from '@ssi/mpi';
import type { Hierarchy } from './hierarchy';
import { bytesOf, NodeArea } from './node-area';
import type { SmpSettings } from './params';

/**
 * Slots of the bcast ring: a writer may run this many pieces ahead of the slowest reader of its
 * node (two broadcasts of one piece in flight).
 */
const AREA_RING = 2;

/** Per served communicator: its nodes' area once opened, or why there is none. */
const areas = new WeakMap<Hierarchy, NodeArea | string>();

/**
 * The node area of `h` for a call of `bytes` bytes, or null when the call takes the
 * sub-communicator path: shared areas off (`coll_smp_shm 0`), a buffer below
 * `coll_smp_shm_min_bytes`, or no area on some node. Opened at the first call that wants it
 * (collective: every rank of the communicator makes the same call with the same size, so all
 * arrive here together), then kept until the communicator is freed. Every node must agree,
 * because the pieces cross between leaders in the area's slot size: a `MIN` over the
 * communicator decides.
 */
export async function areaFor(
  h: Hierarchy,
  s: SmpSettings,
  bytes: number,
  note: (message: string) => void,
): Promise<NodeArea | null> {
  if (!s.shm || bytes < s.shmMinBytes) return null;
  let area = areas.get(h);
  if (area === undefined) {
    const shape = { chunk: s.shmChunkBytes, ring: AREA_RING, ranks: h.local.size };
    area = await NodeArea.open(h.local, shape);
    const ok = new Int32Array([typeof area === 'string' ? 0 : 1]);
    await h.flat.allreduce(ok, MIN, ok);
    if (ok[0] === 0 && typeof area !== 'string') {
      area.close();
      area = 'another node has no shared area';
    }
    note(
      typeof area === 'string'
        ? `smp: no shared area, the sub-communicators move the data: ${area}`
        : `smp: node ${h.loc.node} shares an area of ${bytesOf(shape)} bytes (pieces of ${shape.chunk})`,
    );
    areas.set(h, area);
  }
  return typeof area === 'string' ? null : area;
}

/**
 * Whether `h`'s nodes may still take the area path: no when shared areas are off or an earlier
 * call found that some node has none (every rank knows the same, both being agreed).
 */
export function mayUseArea(h: Hierarchy, s: SmpSettings): boolean {
  return s.shm && typeof areas.get(h) !== 'string';
}

/** Closes `h`'s area (from the communicator's free). */
export function closeArea(h: Hierarchy): void {
  const area = areas.get(h);
  if (area !== undefined && typeof area !== 'string') area.close();
  areas.delete(h);
}
