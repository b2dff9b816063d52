import type { Matcher } from '../matching/matcher';
import { UnexpectedMessage } from '../matching/unexpected';
import type { Proc } from '../proc';
import { ReqType, type RpiRequest } from '../rpi/request';
import type { RestartPlan } from './image';

/**
 * A restart plan applied to the engine before any communication: sequence numbers continue where
 * the rollback left them, the kept messages are queued again as unexpected, and what remains is
 * the set of sends a receiver consumed before the checkpoint (`consumed`), which complete
 * without being sent twice.
 */
export class RestartReplay {
  private constructor(private readonly ranges: RestartPlan['consumed']) {}

  static apply(plan: RestartPlan, procs: readonly Proc[], matcher: Matcher): RestartReplay {
    for (const p of procs) p.sendSeq = plan.sendSeq[p.gps.grank] ?? 0;
    for (const k of plan.restore) {
      const proc = procs.find((p) => p.gps.grank === k.src)!;
      const m = new UnexpectedMessage(proc, k, 0);
      m.data = k.data;
      m.received = k.length;
      m.restored = true;
      if (k.seq > proc.recvSeq) proc.recvSeq = k.seq;
      matcher.addUnexpected(m);
    }
    return new RestartReplay(plan.consumed);
  }

  /** Whether the send `req` was consumed by its receiver before the checkpoint. */
  consumed(req: RpiRequest): boolean {
    if (req.type === ReqType.RECV || req.proc === null) return false;
    const range = this.ranges[req.proc.gps.grank];
    if (range === undefined || req.seq < range.from || req.seq > range.to) return false;
    return !range.kept.has(req.seq);
  }
}
