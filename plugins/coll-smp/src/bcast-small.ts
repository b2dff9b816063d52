import type { CollChannel, Status } from '@ssi/mpi';
import { issued } from './area-flow';
import type { BcastRoute } from './bcast-route';
import type { Hierarchy } from './hierarchy';
import { Tag } from './tags';

/**
 * A small bcast through the areas (the root's buffer below `inlineMax`): the whole buffer goes
 * down the leaders' tree and from each node's writer to the rest of its node, one message per
 * level, tagged BCAST_SMALL; its length is the message's, and no ring slot is used.
 *
 * Written for its cost per call: on 2 + 2 these are the messages of lam_basic's binomial tree, so
 * what smp adds is JavaScript, and with 4-8 ranks on 2 CPUs every µs of it shows (README,
 * Measurements). So nothing here allocates per call but the promises: no call object, no closure,
 * blocking sends (pooled requests, complete at once where the rpi takes the message eagerly)
 * instead of `isend` + `wait`, and one promise hop per step.
 */

const NOTHING: Promise<unknown> = Promise.resolve();

/**
 * Sends `data` to every rank of `ranks` on `ch`, started together (messages above the rpi's eager
 * limit wait for each receiver); resolves when all are out.
 */
function sendEach(
  ch: CollChannel,
  data: Uint8Array,
  ranks: readonly number[],
  tag: number,
): Promise<unknown> {
  if (ranks.length === 0) return NOTHING;
  if (ranks.length === 1) return ch.send(data, ranks[0]!, tag);
  return Promise.all(ranks.map((r) => ch.send(data, r, tag)));
}

/**
 * Passes a small bcast in `data` on: down the leaders' tree (the other nodes' branches are the
 * longer ones, so first) and, from the node's writer (`writes`), to its readers. Resolves when
 * every message is out (the caller then reuses `data`'s memory).
 */
export async function passSmall(
  h: Hierarchy,
  route: BcastRoute,
  data: Uint8Array,
  writes: boolean,
): Promise<void> {
  const down = route.children.length > 0 ? h.leaders!.coll : null;
  const across = writes && route.readers.length > 0 ? h.local.coll : null;
  if (down && across) {
    // Marked handled: should both fail, the second failure must not surface as unhandled.
    const toLeaders = issued(sendEach(down, data, route.children, Tag.BCAST_SMALL));
    await sendEach(across, data, route.readers, Tag.BCAST_SMALL);
    await toLeaders;
  } else if (down) await sendEach(down, data, route.children, Tag.BCAST_SMALL);
  else if (across) await sendEach(across, data, route.readers, Tag.BCAST_SMALL);
}

/**
 * A rank that received a small bcast (`first`, in `staging`): passes it on (another node's leader
 * to its node and down the tree; the root's node leader, when the root is another rank, down the
 * tree) and copies it into `buf` as far as it fits. Resolves with the root's length.
 */
export async function smallArrived(
  h: Hierarchy,
  route: BcastRoute,
  first: Status,
  staging: Uint8Array,
  buf: Uint8Array,
  writes: boolean,
): Promise<number> {
  const length = first.byteLength;
  const data = staging.subarray(0, length);
  const sent = passSmall(h, route, data, writes);
  buf.set(length <= buf.length ? data : data.subarray(0, buf.length));
  await sent;
  return length;
}
