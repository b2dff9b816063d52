import type { Communicator } from '../comm';
import { checkDest, checkSource, checkTag } from '../comm-checks';
import { PROC_NULL } from '../constants';
import type { BufferLike } from '../data';
import { bytesOf, DataKind, decodeValue, elementSize, encodeValue, kindOf } from '../data';
import {
  gatherMessage,
  isTypedMessage,
  packMessage,
  type RecvLayout,
  recvLayout,
  releasePacked,
  type TypedMessage,
} from '../datatype/typed-message';
import { ErrorClass, MpiError } from '../errors';
import { UNCOUNTED } from '../gate';
import { nextTurn } from '../progress/fast-yield';
import { FastRecv } from '../rpi/fast-recv';
import type { RpiRequest } from '../rpi/request';
import { ReqFlag, ReqMark, ReqState, ReqType } from '../rpi/request';
import type { Status } from '../status';
import { statusOf } from '../status';
import type { SendMode } from './request-fill';
import {
  fillRecv,
  fillSend,
  gatherOffer,
  MODE_TYPE,
  procNullStatus,
  scatterOffer,
  stagingReusable,
  useGather,
} from './request-fill';

const NO_BYTES = new Uint8Array(0);

/**
 * The blocking point-to-point calls (`MPI_Send` and its modes, `MPI_Recv`, `MPI_Probe`) on
 * pooled internal requests: no allocation per message on the hot path. Each enters through the
 * entry gate; errors go through the communicator's error handler. Sends and receives report
 * their own return to the gate (`returned`, see `EntryGate.callReporting`): every path below
 * calls it exactly once, before returning a settled promise or in the reaction that settles it.
 */

const RESOLVED: Promise<void> = Promise.resolve();

function fail<T>(comm: Communicator, error: unknown, call: string): Promise<T> {
  return Promise.reject(comm.raiseSync(error, call));
}

/** `fail`, for a call that returns here. */
function failReturned<T>(
  comm: Communicator,
  error: unknown,
  call: string,
  returned: () => void,
): Promise<T> {
  returned();
  return fail(comm, error, call);
}

/** The call completed before returning: at once, or after one event-loop turn (fast yield). */
function completedNow(comm: Communicator, returned: () => void): Promise<void> {
  if (comm.host.engine.fastYield.completedAtOnce()) return nextTurn().then(returned);
  returned();
  return RESOLVED;
}

/** A blocking send in any mode. */
export function blockingSend(
  comm: Communicator,
  mode: SendMode,
  data: unknown,
  dest: number,
  tag: number,
): Promise<void> {
  const gate = comm.host.engine.gate;
  if (gate.free) return sendNow(comm, mode, data, dest, tag, UNCOUNTED);
  return gate.callReporting((returned) => sendNow(comm, mode, data, dest, tag, returned));
}

function sendNow(
  comm: Communicator,
  mode: SendMode,
  data: unknown,
  dest: number,
  tag: number,
  returned: () => void,
): Promise<void> {
  const bad = checkDest(comm, dest) ?? checkTag(comm, tag, false);
  if (bad) return failReturned(comm, bad, mode, returned);
  if (dest === PROC_NULL) {
    returned();
    return RESOLVED;
  }
  let bytes: Uint8Array;
  let kind: number;
  let packed: ReturnType<typeof packMessage> | null = null;
  let gathered: ReturnType<typeof gatherMessage> = null;
  if (isTypedMessage(data)) {
    try {
      const offer = gatherOffer(comm, mode, dest);
      gathered = offer === null ? null : gatherMessage(data, mode, offer);
      if (gathered === null) {
        packed = packMessage(data, mode);
        ({ bytes, kind } = packed);
      } else {
        kind = gathered.kind;
        bytes = NO_BYTES; // the rpi writes the ranges of `gathered.list`
      }
    } catch (err) {
      return failReturned(comm, err, mode, returned);
    }
  } else if (typeof data === 'object' && data !== null && ArrayBuffer.isView(data)) {
    kind = kindOf(data as BufferLike);
    bytes = data instanceof Uint8Array ? data : bytesOf(data as BufferLike);
  } else {
    try {
      ({ bytes, kind } = encodeValue(data));
    } catch (err) {
      return failReturned(comm, err, mode, returned);
    }
  }
  if (mode === 'bsend') {
    try {
      launchBuffered(comm, bytes, kind, dest, tag);
    } catch (err) {
      return failReturned(comm, err, mode, returned);
    } finally {
      if (packed) releasePacked(packed); // copied into the attached buffer
    }
    return completedNow(comm, returned);
  }
  const engine = comm.host.engine;
  const req = engine.acquire();
  fillSend(comm, req, MODE_TYPE[mode], bytes, kind, dest, tag);
  if (gathered !== null) useGather(req, gathered.list);
  if (mode !== 'ssend' && engine.tryFastSend(req)) {
    engine.release(req);
    if (packed) releasePacked(packed);
    return completedNow(comm, returned);
  }
  return runBlocking(comm, req).then((r) => {
    returned();
    const err = finishBlocking(comm, r);
    if (packed) releasePacked(packed);
    if (err) return fail(comm, err, mode);
  });
}

/** Copies a message into the attached buffer and starts its transmission (buffered mode). */
export function launchBuffered(
  comm: Communicator,
  bytes: Uint8Array,
  kind: number,
  dest: number,
  tag: number,
): void {
  const buffer = comm.host.bsendBuffer();
  if (!buffer) {
    throw new MpiError(
      ErrorClass.ERR_BUFFER,
      'buffered send without an attached buffer; call mpi.attachBuffer(size) first ' +
        `(size = sum of message sizes + BSEND_OVERHEAD each)`,
    );
  }
  const length = bytes.byteLength;
  const offset = buffer.allocate(length);
  const region = buffer.memory.subarray(offset, offset + length);
  region.set(bytes);
  const engine = comm.host.engine;
  const req = engine.acquire();
  fillSend(comm, req, ReqType.BSEND, region, kind, dest, tag);
  req.marks |= ReqMark.DYNBUF;
  req.onDone = (r) => {
    if (r.error) engine.verbose(0, `buffered send to rank ${dest} failed: ${r.error.message}`);
    engine.destroy(r);
    engine.release(r);
    buffer.release(offset, length);
  };
  engine.build(req);
  engine.start(req);
}

/**
 * A blocking receive into the caller's buffer, or into `[buffer, datatype, count]` (through a
 * packed staging area unless the type is contiguous); resolves with the status.
 */
export function recvInto(
  comm: Communicator,
  into: BufferLike | TypedMessage,
  source: number,
  tag: number,
): Promise<Status> {
  const gate = comm.host.engine.gate;
  if (gate.free) return recvNow(comm, into, source, tag, UNCOUNTED);
  return gate.callReporting((returned) => recvNow(comm, into, source, tag, returned));
}

function recvNow(
  comm: Communicator,
  into: BufferLike | TypedMessage,
  source: number,
  tag: number,
  returned: () => void,
): Promise<Status> {
  const bad = checkSource(comm, source) ?? checkTag(comm, tag, true);
  if (bad) return failReturned<Status>(comm, bad, 'recv', returned);
  let layout: RecvLayout | null = null;
  if (isTypedMessage(into)) {
    try {
      layout = recvLayout(into, 'recv', stagingReusable(comm), scatterOffer(comm));
    } catch (err) {
      return failReturned<Status>(comm, err, 'recv', returned);
    }
  }
  if (source === PROC_NULL) {
    returned();
    return Promise.resolve(procNullStatus());
  }
  const plain = into as BufferLike;
  const kind = layout ? layout.kind : kindOf(plain);
  const elementBytes = layout ? layout.elementBytes : elementSize(kind);
  const req = comm.host.engine.acquire();
  const bytes = layout ? layout.bytes : plain instanceof Uint8Array ? plain : bytesOf(plain);
  fillRecv(comm, req, ReqType.RECV, bytes, kind, source, tag);
  let spun = false;
  if (layout) req.scatter = layout.scatter;
  else {
    const fast = comm.host.engine.tryFastRecv(req);
    if (fast === FastRecv.DONE) return fastRecvDone(comm, req, elementBytes, returned);
    spun = fast === FastRecv.WAITED;
  }
  const waiting = startBlocking(comm, req, spun);
  // completed now (a message here, or one a polling rpi's spin took): no reaction to wait for
  if (waiting === null) return finishRecv(comm, req, elementBytes, layout, returned);
  return waiting.then((r) => finishRecv(comm, r, elementBytes, layout, returned));
}

/**
 * The end of a receive the rpi's fast path completed (no error: it takes only messages that
 * fit): its status; every so often after one event-loop turn (`completedNow`).
 */
function fastRecvDone(
  comm: Communicator,
  req: RpiRequest,
  elementBytes: number,
  returned: () => void,
): Promise<Status> {
  const engine = comm.host.engine;
  const st = statusOf(req, elementBytes);
  engine.release(req);
  if (engine.fastYield.completedAtOnce()) {
    return nextTurn().then(() => {
      returned();
      return st;
    });
  }
  returned();
  return Promise.resolve(st);
}

/** The end of a blocking receive: its status, or its error through the error handler. */
export function finishRecv(
  comm: Communicator,
  r: RpiRequest,
  elementBytes: number,
  layout: RecvLayout | null,
  returned: () => void,
): Promise<Status> {
  returned();
  const st = statusOf(r, elementBytes);
  const typedErr = layout ? layout.finish(r) : null;
  const err = typedErr ?? finishBlocking(comm, r);
  if (typedErr) finishBlocking(comm, r);
  st.error = err;
  return err ? fail<Status>(comm, err, 'recv') : Promise.resolve(st);
}

/** A blocking receive of any value; resolves with the decoded value, fills `status` if given. */
export function recvValue(
  comm: Communicator,
  source: number,
  tag: number,
  status?: Status,
): Promise<unknown> {
  return comm.host.engine.gate.callReporting((returned) => {
    const bad = checkSource(comm, source) ?? checkTag(comm, tag, true);
    if (bad) return failReturned(comm, bad, 'recv', returned);
    if (source === PROC_NULL) {
      returned();
      if (status) Object.assign(status, procNullStatus());
      return Promise.resolve(undefined);
    }
    const req = comm.host.engine.acquire();
    fillRecv(comm, req, ReqType.RECV, null, DataKind.OBJECT, source, tag);
    return runBlocking(comm, req).then((r) => {
      returned();
      if (status) Object.assign(status, statusOf(r, 0));
      let err = r.error;
      let value: unknown;
      if (!err) {
        try {
          value = decodeValue(r.buf ?? new Uint8Array(0), r.stKind);
        } catch (e) {
          err = e as MpiError;
        }
      }
      finishBlocking(comm, r);
      return err ? fail(comm, err, 'recv') : value;
    });
  });
}

/**
 * Non-blocking probe: the status of a matching message that has arrived, or undefined (also
 * while the entry gate is held: nothing is seen to arrive during a checkpoint).
 */
export function iprobe(comm: Communicator, source: number, tag: number): Status | undefined {
  const bad = checkSource(comm, source) ?? checkTag(comm, tag, true);
  if (bad) throw comm.raiseSync(bad, 'iprobe');
  if (source === PROC_NULL) return procNullStatus();
  const engine = comm.host.engine;
  return engine.gate.query(() => {
    const req = engine.acquire();
    fillRecv(comm, req, ReqType.PROBE, null, DataKind.OBJECT, source, tag);
    const st = engine.iprobe(req) ? statusOf(req, 0) : undefined;
    engine.release(req);
    return st;
  }, undefined);
}

/** Blocking probe: waits until a matching message has arrived. */
export function probe(comm: Communicator, source: number, tag: number): Promise<Status> {
  const engine = comm.host.engine;
  return engine.gate.call(async () => {
    for (;;) {
      const st = iprobe(comm, source, tag);
      if (st) return st;
      await engine.nextArrival();
    }
  });
}

/**
 * Runs a filled blocking request to completion; resolves with it (still to be released). Never
 * rejects: the callers report their return to the gate in its reaction.
 */
function runBlocking(comm: Communicator, req: RpiRequest): Promise<RpiRequest> {
  return startBlocking(comm, req, false) ?? Promise.resolve(req);
}

/**
 * `runBlocking`, but null when the request completed without waiting and the caller may go on
 * at once (no promise, no reaction: the hot path of a receive over a polling rpi). `spun`: a
 * fast receive spun the module's whole bound already, so the wait looks once instead of
 * spinning again.
 */
function startBlocking(
  comm: Communicator,
  req: RpiRequest,
  spun: boolean,
): Promise<RpiRequest> | null {
  const engine = comm.host.engine;
  postBlocking(comm, req);
  if (req.state !== ReqState.DONE && !(spun ? engine.pollDone(req) : engine.spinDone(req))) {
    return engine.sleepFor(req);
  }
  // Completed without waiting: every so often after one event-loop turn.
  return engine.fastYield.completedAtOnce() ? nextTurn().then(() => req) : null;
}

/** Builds and starts a filled request of a blocking call (the rpi sees it from now on). */
export function postBlocking(comm: Communicator, req: RpiRequest): void {
  const engine = comm.host.engine;
  req.marks |= ReqMark.BLKTYPE;
  engine.build(req);
  req.onDone = null;
  req.flags = ReqFlag.BLOCK;
  engine.start(req);
}

export function finishBlocking(comm: Communicator, req: RpiRequest): MpiError | null {
  const engine = comm.host.engine;
  const err = req.error;
  engine.destroy(req);
  engine.release(req);
  return err;
}
