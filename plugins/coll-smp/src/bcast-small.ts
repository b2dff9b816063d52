import type { CollChannel, CollRequest, Status } from '@ssi/mpi';
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
 * instead of `isend` + `wait` (`passSmall`), and one promise hop per step.
 */

/**
 * Passes a small bcast in `data` on: down the leaders' tree (the other nodes' branches are the
 * longer ones, so first) and, from the node's writer (`writes`), to its readers. Resolves when
 * every message is out (the caller then reuses `data`'s memory). Up to `BLOCKING_MAX` bytes by
 * blocking sends, one after the other: a blocking send that cannot complete at once spins before
 * it returns and holds the next one back, which messages the rpis take eagerly rarely do; an
 * `isend` for each would cost a request object (4 + 4 ranks, 8 B: 103-106 µs of CPU per call over
 * all ranks against 89-92, without polling). Larger ones may wait for their receivers
 * (rendezvous), so all but the last start at once (`passStarted`).
 */
export async function passSmall(
  h: Hierarchy,
  route: BcastRoute,
  data: Uint8Array,
  writes: boolean,
): Promise<void> {
  if (data.length > BLOCKING_MAX) return passStarted(h, route, data, writes);
  const { children, readers } = route;
  for (const r of children) await h.leaders!.coll.send(data, r, Tag.BCAST_SMALL);
  if (writes) for (const r of readers) await h.local.coll.send(data, r, Tag.BCAST_SMALL);
}

/** Bytes up to which `passSmall` sends one message after the other (under the rpis' eager limits). */
const BLOCKING_MAX = 4096;

/**
 * `passSmall` for a message that may go by rendezvous: every message but the last starts as an
 * `isend` (each waits for its receiver at once), the last is a blocking send.
 */
async function passStarted(
  h: Hierarchy,
  route: BcastRoute,
  data: Uint8Array,
  writes: boolean,
): Promise<void> {
  const { children, readers } = route;
  const across = writes && readers.length > 0;
  const lastCh = across ? h.local.coll : children.length > 0 ? h.leaders!.coll : null;
  if (lastCh === null) return;
  const lastRanks = across ? readers : children;
  let started: CollRequest[] | null = null;
  if (across && children.length > 0)
    started = startEach(h.leaders!.coll, data, children, children.length);
  if (lastRanks.length > 1) {
    const more = startEach(lastCh, data, lastRanks, lastRanks.length - 1);
    started = started ? started.concat(more) : more;
  }
  await lastCh.send(data, lastRanks[lastRanks.length - 1]!, Tag.BCAST_SMALL);
  if (started) for (const r of started) await r.wait();
}

/** Starts an `isend` of `data` to the first `n` of `ranks` on `ch`. */
function startEach(
  ch: CollChannel,
  data: Uint8Array,
  ranks: readonly number[],
  n: number,
): CollRequest[] {
  const out: CollRequest[] = [];
  for (let i = 0; i < n; i++) out.push(ch.isend(data, ranks[i]!, Tag.BCAST_SMALL));
  return out;
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
