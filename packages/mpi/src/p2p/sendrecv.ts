import type { Communicator } from '../comm';
import { checkDest, checkSource, checkTag, isBufferLike } from '../comm-checks';
import { PROC_NULL } from '../constants';
import type { BufferLike } from '../data';
import { bytesOf, elementSize, kindOf } from '../data';
import { UNCOUNTED } from '../gate';
import { nextTurn } from '../progress/fast-yield';
import type { RpiRequest } from '../rpi/request';
import { ReqState, ReqType } from '../rpi/request';
import type { Status } from '../status';
import { blockingSend, finishRecv, postBlocking } from './blocking';
import { fillRecv } from './request-fill';

/**
 * `MPI_Sendrecv` into a plain buffer on a pooled internal request: the receive is posted first
 * (so two processes exchanging never deadlock), then the send runs as a blocking send (the rpi's
 * fast path when it can), then the call waits for the receive as a blocking receive does. The
 * general path (`irecv` + `isend` + `Promise.all` of two `Request`s) cost two public requests,
 * their closures and three promises per call; every round of a small collective is one such
 * exchange on the collective context (a 2-rank barrier is one).
 *
 * Returns null where it does not apply, and the caller takes the general path: a typed or no
 * receive buffer, PROC_NULL on either side, an argument error of either half (raised there, as
 * always, before anything is posted), or the
 * entry gate not free (a checkpoint in progress, or a module counting calls).
 */
export function sendrecvBuffer(
  comm: Communicator,
  data: unknown,
  dest: number,
  sendTag: number,
  into: unknown,
  source: number,
  recvTag: number,
): Promise<Status> | null {
  const engine = comm.host.engine;
  if (!engine.gate.free || !isBufferLike(into)) return null;
  if (source === PROC_NULL || dest === PROC_NULL) return null;
  if (checkSource(comm, source) ?? checkTag(comm, recvTag, true)) return null;
  if (checkDest(comm, dest) ?? checkTag(comm, sendTag, false)) return null;
  const kind = kindOf(into);
  const elementBytes = elementSize(kind);
  const req = engine.acquire();
  fillRecv(comm, req, ReqType.RECV, bytesOf(into as BufferLike), kind, source, recvTag);
  postBlocking(comm, req);
  return blockingSend(comm, 'send', data, dest, sendTag).then(
    () => waitRecv(comm, req, elementBytes),
    (err) => {
      // The send failed (a value it cannot encode, a lost peer): the call fails, and its receive
      // must not stay posted to take a later message into the caller's buffer.
      engine.cancel(req);
      throw err;
    },
  );
}

/** The receive half: done now, after the module's spin, or when the event loop completes it. */
function waitRecv(comm: Communicator, req: RpiRequest, elementBytes: number): Promise<Status> {
  const engine = comm.host.engine;
  const finish = (r: RpiRequest) => finishRecv(comm, r, elementBytes, null, UNCOUNTED);
  if (req.state !== ReqState.DONE && !engine.spinDone(req)) {
    return engine.sleepFor(req).then(finish);
  }
  // Completed without waiting: every so often after one event-loop turn (`FastYield`).
  if (engine.fastYield.completedAtOnce()) return nextTurn().then(() => finish(req));
  return finish(req);
}
