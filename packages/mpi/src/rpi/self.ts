import { allocMessage } from '../data';
import type { Matcher } from './matching';
import { deliverBytes, matchStatus, UnexpectedMessage } from './matching';
import { ReqState, ReqType, type RpiRequest } from './request';
import type { RpiHost } from './types';

/**
 * Messages from a process to itself, for any transport that uses `Matcher` (C.2.8: the module
 * handles sends to self in `start`). A send to self is matched directly against the posted
 * receives; unmatched, a short standard/buffered/ready message is copied into the unexpected
 * queue and completes at once, while a synchronous or long message stays pending until a
 * receive takes it (so that `ssend` to self completes only when matched, as MPI requires).
 */
export class SelfChannel {
  private readonly pending = new Map<RpiRequest, UnexpectedMessage>();

  constructor(
    private readonly matcher: Matcher,
    private readonly host: RpiHost,
    /** Longest message copied eagerly (the transport's eager limit). */
    private readonly eagerLimit: number,
  ) {}

  /** `start` of a send whose destination is this process. */
  send(req: RpiRequest): void {
    const buf = req.buf!;
    const me = this.host.myProc;
    const recv = this.matcher.takePosted(req.cid, req.myRank, req.tag);
    if (recv) {
      matchStatus(recv, me, req.myRank, req.tag, buf.byteLength, req.kind, req.seq);
      deliverBytes(recv, buf, false);
      recv.state = ReqState.DONE;
      req.state = ReqState.DONE;
      this.host.complete(recv);
      this.host.complete(req);
      return;
    }
    const m = new UnexpectedMessage(
      me,
      req.cid,
      req.myRank,
      req.tag,
      buf.byteLength,
      req.kind,
      req.seq,
      0,
    );
    if (req.type !== ReqType.SSEND && buf.byteLength <= this.eagerLimit) {
      const copy = allocMessage(buf.byteLength);
      copy.set(buf);
      m.data = copy;
      m.received = buf.byteLength;
      this.matcher.addUnexpected(m);
      req.state = ReqState.DONE;
      this.host.complete(req);
      return;
    }
    m.data = buf;
    m.received = buf.byteLength;
    m.sender = req;
    this.pending.set(req, m);
    this.matcher.addUnexpected(m);
  }

  /** A receive took an unexpected message that this process sent to itself. */
  receive(req: RpiRequest, m: UnexpectedMessage): void {
    matchStatus(req, m.proc, m.rank, m.tag, m.length, m.kind, m.seq);
    deliverBytes(req, m.data!, m.sender === null);
    req.state = ReqState.DONE;
    this.host.complete(req);
    const sender = m.sender;
    if (sender) {
      this.pending.delete(sender);
      sender.state = ReqState.DONE;
      this.host.complete(sender);
    }
  }

  /** Cancels a pending send to self that no receive has taken. True when it was cancelled. */
  cancel(req: RpiRequest): boolean {
    const m = this.pending.get(req);
    if (!m || !this.matcher.removeUnexpected(m)) return false;
    this.pending.delete(req);
    req.cancelled = true;
    req.state = ReqState.DONE;
    this.host.complete(req);
    return true;
  }
}
