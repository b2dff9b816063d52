import { ANY_TAG } from '@ssi/mpi';

/** A credit the peer gave us: it has a receive posted for (`cid`, `tag`) of up to `capacity` bytes. */
interface HeldCredit {
  id: number;
  cid: number;
  tag: number;
  capacity: number;
}

/** Whether a message of `length` bytes for (`cid`, `tag`) fits a credit's receive. */
function fits(
  creditCid: number,
  creditTag: number,
  capacity: number,
  cid: number,
  tag: number,
  length: number,
): boolean {
  return (
    creditCid === cid &&
    capacity >= length &&
    (creditTag === ANY_TAG ? tag >= 0 : creditTag === tag)
  );
}

/**
 * Receiver-initiated rendezvous, the bookkeeping of one connection. A receive longer than the
 * eager limit, posted for this peer before its message arrived, is announced to the peer with a
 * credit; a long message that finds a credit goes out at once as an eager message, straight into
 * the posted buffer, instead of asking first (request to send, clear to send: two more trips).
 *
 * Both sides count the message envelopes (eager and request to send) of the direction sender →
 * receiver. A credit carries the receiver's count at the time it posted the receive, so the
 * sender can tell that none of its messages can have matched that receive: the credit is good
 * only while the sender's own count still equals it, that is, until the sender sends any
 * message. The one way a credited message can still arrive unexpected is a receive cancelled
 * while its withdrawal was on the way; it is then buffered like any eager message, so credits
 * change how fast a message travels, never which receive it matches.
 *
 * A credit that crossed our request to send on the wire (granted when the receiver had seen
 * everything before that request, and fitting it) lets the body follow the request at once,
 * without waiting for the clear to send; `Ask` is what the caller needs to send that body. The
 * request has been matched (or queued) in order by then, so this, too, changes only the timing;
 * the receiver still answers the request and takes the body whichever way it comes.
 */
export class PeerCredits<Ask = unknown> {
  /** Message envelopes written to the peer (mod 2^32). */
  sent = 0;
  /** Message envelopes read from the peer (mod 2^32). */
  received = 0;
  /** Receives posted here that hold a credit the peer may still use. */
  granted = 0;
  private lastId = 0;
  /** Credits from the peer, all good while `sent` does not move. */
  private readonly held: HeldCredit[] = [];
  /** Our last message, when it was a request to send that no credit has answered yet. */
  private pendingAsk: Ask | null = null;
  private askCid = 0;
  private askTag = 0;
  private askLength = 0;

  /** A new credit id for a receive posted now (never 0: 0 means "no credit" on the wire). */
  grant(): number {
    this.granted++;
    this.lastId = this.lastId === 0xffffffff ? 1 : this.lastId + 1;
    return this.lastId;
  }

  /** A receive holding a credit matched a message, was cancelled or went away. */
  settle(): void {
    if (this.granted > 0) this.granted--; // 0 after clear(): the connection is gone
  }

  /**
   * The peer sent a credit. It is kept if no message of ours has crossed it. If exactly our last
   * message, a request to send that it fits, crossed it, that request's `Ask` is returned: its
   * body may go now. Otherwise null.
   */
  hold(id: number, cid: number, tag: number, capacity: number, seen: number): Ask | null {
    if (seen === this.sent) {
      this.held.push({ id, cid, tag, capacity });
      return null;
    }
    const ask = this.pendingAsk;
    if (ask === null || seen !== (this.sent - 1) >>> 0) return null;
    if (!fits(cid, tag, capacity, this.askCid, this.askTag, this.askLength)) return null;
    this.pendingAsk = null;
    return ask;
  }

  /** The peer withdrew credit `id` (its receive was cancelled). */
  withdraw(id: number): void {
    const i = this.held.findIndex((c) => c.id === id);
    if (i >= 0) this.held.splice(i, 1);
  }

  /** Counts an eager message about to be written: it voids the credits held. */
  noteSent(): void {
    this.sent = (this.sent + 1) >>> 0;
    this.pendingAsk = null;
    if (this.held.length > 0) this.held.length = 0;
  }

  /**
   * Counts a long message about to be written and returns the credit it may use instead of a
   * request to send (0: none). With none, the message asks first, and `ask` is what a credit
   * crossing that request returns (see `hold`).
   */
  takeFor(cid: number, tag: number, length: number, ask: Ask): number {
    let id = 0;
    for (const c of this.held) {
      if (fits(c.cid, c.tag, c.capacity, cid, tag, length)) {
        id = c.id;
        break;
      }
    }
    this.noteSent();
    if (id === 0) {
      this.pendingAsk = ask;
      this.askCid = cid;
      this.askTag = tag;
      this.askLength = length;
    }
    return id;
  }

  /** Counts a message envelope read from the peer (what a credit granted after it carries). */
  countReceived(): void {
    this.received = (this.received + 1) >>> 0;
  }

  /** Forgets the credits the peer gave (a new connection replaces the old one). */
  forgetHeld(): void {
    this.held.length = 0;
    this.pendingAsk = null;
  }

  /** Forgets everything (the connection is gone). */
  clear(): void {
    this.held.length = 0;
    this.pendingAsk = null;
    this.granted = 0;
  }
}
