import { allocMessage } from '../data';
import type { Proc } from '../proc';
import { ReqType, type RpiRequest } from '../rpi/request';
import { deliverBytes, matchStatus } from './delivery';
import type { Matcher } from './matcher';
import { UnexpectedMessage } from './unexpected';

/**
 * Messages from a process to itself, handled by the MPI layer for every transport (LAM leaves
 * them to each rpi's `start`, C.2.8; here no rpi sees them). A send to self is matched directly
 * against the posted receives; unmatched, a short standard/buffered/ready message is copied into
 * the unexpected queue and completes at once, while a synchronous or long message stays pending
 * until a receive takes it (so that `ssend` to self completes only when matched, as MPI requires).
 */
export class SelfChannel {
  private readonly pending = new Map<RpiRequest, UnexpectedMessage>();

  constructor(
    private readonly matcher: Matcher,
    private readonly me: Proc,
    private readonly complete: (req: RpiRequest) => void,
    /** Longest message copied eagerly. */
    private readonly eagerLimit: number,
  ) {}

  /** `start` of a send whose destination is this process. */
  send(req: RpiRequest): void {
    const buf = req.buf!;
    const me = this.me;
    const recv = this.matcher.takePosted(req.cid, req.myRank, req.tag);
    if (recv) {
      matchStatus(recv, me, selfHeader(req, buf));
      deliverBytes(recv, buf, false);
      this.complete(recv);
      this.complete(req);
      return;
    }
    const m = new UnexpectedMessage(me, selfHeader(req, buf), 0);
    if (req.type !== ReqType.SSEND && buf.byteLength <= this.eagerLimit) {
      const copy = allocMessage(buf.byteLength);
      copy.set(buf);
      m.data = copy;
      m.received = buf.byteLength;
      this.matcher.addUnexpected(m);
      this.complete(req);
      return;
    }
    m.data = buf;
    m.received = buf.byteLength;
    m.sender = req;
    this.pending.set(req, m);
    this.matcher.addUnexpected(m);
  }

  /** A receive (its status recorded) took an unexpected message this process sent to itself. */
  receive(req: RpiRequest, m: UnexpectedMessage): void {
    deliverBytes(req, m.data!, m.sender === null);
    this.complete(req);
    const sender = m.sender;
    if (sender) {
      this.pending.delete(sender);
      this.complete(sender);
    }
  }

  /** Cancels a pending send to self that no receive has taken. True when it was cancelled. */
  cancel(req: RpiRequest): boolean {
    const m = this.pending.get(req);
    if (!m || !this.matcher.removeUnexpected(m)) return false;
    this.pending.delete(req);
    req.cancelled = true;
    this.complete(req);
    return true;
  }

  /** Pending sends to self (synchronous or long ones no receive has taken yet). */
  get pendingCount(): number {
    return this.pending.size;
  }
}

/** The header of a send to self (allocated: sends to self are not the hot path). */
function selfHeader(req: RpiRequest, buf: Uint8Array) {
  return {
    cid: req.cid,
    rank: req.myRank,
    tag: req.tag,
    length: buf.byteLength,
    kind: req.kind,
    seq: req.seq,
  };
}
