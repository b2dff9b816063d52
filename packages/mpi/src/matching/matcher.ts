import { ANY_SOURCE, ANY_TAG } from '../constants';
import type { RpiRequest } from '../rpi/request';
import type { UnexpectedMessage } from './unexpected';

/** Intrusive links both queue items carry, so queueing allocates nothing. */
interface Linked<T> {
  qPrev: T | null;
  qNext: T | null;
  qOrder: number;
  qList: unknown;
}

/** A FIFO whose items can also leave from the middle (cancel, tag-specific matches). */
export class QueueList<T extends Linked<T>> {
  head: T | null = null;
  tail: T | null = null;
  size = 0;

  push(item: T): void {
    item.qPrev = this.tail;
    item.qNext = null;
    item.qList = this;
    if (this.tail) this.tail.qNext = item;
    else this.head = item;
    this.tail = item;
    this.size++;
  }

  remove(item: T): boolean {
    if (item.qList !== this) return false;
    if (item.qPrev) item.qPrev.qNext = item.qNext;
    else this.head = item.qNext;
    if (item.qNext) item.qNext.qPrev = item.qPrev;
    else this.tail = item.qPrev;
    item.qPrev = item.qNext = null;
    item.qList = null;
    this.size--;
    return true;
  }
}

export function tagMatches(want: number, got: number): boolean {
  return want === ANY_TAG ? got >= 0 : want === got;
}

class CommQueues {
  /** Posted receives by source rank. */
  posted: (QueueList<RpiRequest> | undefined)[] = [];
  /** Posted ANY_SOURCE receives. */
  postedAny = new QueueList<RpiRequest>();
  /** Unexpected messages by source rank. */
  unexpected: (QueueList<UnexpectedMessage> | undefined)[] = [];
}

/**
 * MPI message matching for every transport (Ch. 5.1.6): the posted-receive queue and the
 * unexpected-message queue of one process, per communicator context.
 *
 * - A message matches the earliest-posted receive whose context, source (or ANY_SOURCE) and tag
 *   (or ANY_TAG, which matches tags >= 0) fit.
 * - A receive matches the earliest-arrived unexpected message that fits.
 * - Messages from one sender are matched in the order the transport hands them over, so a
 *   transport that delivers each sender's envelopes in sending order gets MPI's non-overtaking
 *   rule for free.
 *
 * Queues are per (context, source) so the common case touches only the head of one list.
 */
export class Matcher {
  private readonly comms = new Map<number, CommQueues>();
  private lastCid = -1;
  private last: CommQueues | null = null;
  private order = 0;
  postedCount = 0;
  unexpectedCount = 0;

  constructor(
    /** Called after an unexpected message was queued (wakes blocking probes). */
    private readonly onArrival: () => void = () => {},
  ) {}

  private queues(cid: number): CommQueues {
    if (cid === this.lastCid && this.last) return this.last;
    let q = this.comms.get(cid);
    if (!q) {
      q = new CommQueues();
      this.comms.set(cid, q);
    }
    this.lastCid = cid;
    this.last = q;
    return q;
  }

  /** Queue a receive that found no unexpected message (call `takeUnexpected` first). */
  post(req: RpiRequest): void {
    const q = this.queues(req.cid);
    req.qOrder = ++this.order;
    if (req.rank === ANY_SOURCE) q.postedAny.push(req);
    else {
      let list = q.posted[req.rank];
      if (!list) list = q.posted[req.rank] = new QueueList<RpiRequest>();
      list.push(req);
    }
    this.postedCount++;
  }

  /** The posted receive an incoming message (context, sender rank, tag) matches, dequeued; or null. */
  takePosted(cid: number, source: number, tag: number): RpiRequest | null {
    const q = this.queues(cid);
    let best: RpiRequest | null = null;
    const list = q.posted[source];
    if (list) {
      for (let r = list.head; r; r = r.qNext) {
        if (tagMatches(r.tag, tag)) {
          best = r;
          break;
        }
      }
    }
    for (let r = q.postedAny.head; r; r = r.qNext) {
      if (best && r.qOrder > best.qOrder) break;
      if (tagMatches(r.tag, tag)) {
        best = r;
        break;
      }
    }
    if (!best) return null;
    (best.qList as QueueList<RpiRequest>).remove(best);
    this.postedCount--;
    return best;
  }

  /** Takes a posted receive back (cancel). False when it is no longer queued. */
  unpost(req: RpiRequest): boolean {
    const list = req.qList as QueueList<RpiRequest> | null;
    if (!list?.remove(req)) return false;
    this.postedCount--;
    return true;
  }

  /** Every posted receive, for failing them when a peer dies. */
  posted(): RpiRequest[] {
    const out: RpiRequest[] = [];
    for (const q of this.comms.values()) {
      for (const list of [...q.posted, q.postedAny]) {
        for (let r = list?.head ?? null; r; r = r.qNext) out.push(r);
      }
    }
    return out.sort((a, b) => a.qOrder - b.qOrder);
  }

  /** Queue a message no posted receive matched. */
  addUnexpected(msg: UnexpectedMessage): void {
    const q = this.queues(msg.cid);
    msg.qOrder = ++this.order;
    let list = q.unexpected[msg.rank];
    if (!list) list = q.unexpected[msg.rank] = new QueueList<UnexpectedMessage>();
    list.push(msg);
    this.unexpectedCount++;
    this.onArrival();
  }

  /** The earliest unexpected message a receive or probe matches, left in the queue; or null. */
  findUnexpected(req: RpiRequest): UnexpectedMessage | null {
    const q = this.queues(req.cid);
    if (req.rank !== ANY_SOURCE) {
      const list = q.unexpected[req.rank];
      for (let m = list?.head ?? null; m; m = m.qNext) if (tagMatches(req.tag, m.tag)) return m;
      return null;
    }
    let best: UnexpectedMessage | null = null;
    for (const list of q.unexpected) {
      for (let m = list?.head ?? null; m; m = m.qNext) {
        if (best && m.qOrder > best.qOrder) break;
        if (tagMatches(req.tag, m.tag)) {
          best = m;
          break;
        }
      }
    }
    return best;
  }

  /** Like `findUnexpected`, and dequeues the message. */
  takeUnexpected(req: RpiRequest): UnexpectedMessage | null {
    if (this.unexpectedCount === 0) return null;
    const m = this.findUnexpected(req);
    if (m) this.removeUnexpected(m);
    return m;
  }

  removeUnexpected(msg: UnexpectedMessage): boolean {
    const list = msg.qList as QueueList<UnexpectedMessage> | null;
    if (!list?.remove(msg)) return false;
    this.unexpectedCount--;
    return true;
  }

  /** Every unexpected message, oldest first. */
  unexpected(): UnexpectedMessage[] {
    const out: UnexpectedMessage[] = [];
    for (const q of this.comms.values()) {
      for (const list of q.unexpected) {
        for (let m = list?.head ?? null; m; m = m.qNext) out.push(m);
      }
    }
    return out.sort((a, b) => a.qOrder - b.qOrder);
  }
}
