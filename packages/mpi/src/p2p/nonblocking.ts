import type { Communicator } from '../comm';
import { checkDest, checkSource, checkTag, isBufferLike } from '../comm-checks';
import { ANY_SOURCE, ANY_TAG, PROC_NULL } from '../constants';
import type { BufferLike } from '../data';
import { bytesOf, DataKind, elementSize, encodeValue, kindOf } from '../data';
import {
  gatherMessage,
  isTypedMessage,
  packMessage,
  partsOf,
  type RecvLayout,
  recvLayout,
  releasePacked,
  type TypedMessage,
} from '../datatype/typed-message';
import type { RequestOp } from '../request';
import { PersistentRequest, Request } from '../request';
import { ReqMark, ReqType, RpiRequest } from '../rpi/request';
import { Status } from '../status';
import { launchBuffered } from './blocking';
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
 * Non-blocking and persistent point-to-point requests (`MPI_Isend` …, `MPI_Send_init` …):
 * a `Request` whose `RequestOp` builds the internal request once (persistent) or per start.
 */

/** A send request in `mode`; persistent ones send `data`'s current contents at every start. */
export function makeSend(
  comm: Communicator,
  call: string,
  mode: SendMode,
  data: unknown,
  dest: number,
  tag: number,
  persistent: boolean,
): Request<Status> {
  const bad = checkDest(comm, dest) ?? checkTag(comm, tag, false);
  if (bad) throw comm.raiseSync(bad, call);
  const engine = comm.host.engine;
  const typed = isTypedMessage(data);
  if (typed) {
    try {
      partsOf(data, call);
    } catch (err) {
      throw comm.raiseSync(err, call);
    }
  }
  const buffer = isBufferLike(data);
  let bytes: Uint8Array | null = buffer ? bytesOf(data) : null;
  const kind = buffer ? kindOf(data) : typed ? data[1].messageKind : DataKind.OBJECT;
  let rreq: RpiRequest | null = null;
  // The staging memory of the pass in flight (a derived type), given back at its completion.
  let packed: ReturnType<typeof packMessage> | null = null;
  // A derived type the rpi writes from its ranges (the rpi's gather path): no staging copy.
  let gathered: ReturnType<typeof gatherMessage> = null;
  const encode = (): Uint8Array => {
    // Objects and derived types are encoded at every start: a persistent request sends the
    // current contents.
    if (bytes !== null && buffer) return bytes;
    if (typed) {
      const offer = gatherOffer(comm, mode, dest);
      gathered = offer === null ? null : gatherMessage(data, call, offer);
      if (gathered !== null) return NO_BYTES;
      packed = packMessage(data, call);
      bytes = packed.bytes;
    } else bytes = encodeValue(data).bytes;
    return bytes;
  };
  const release = () => {
    if (packed) releasePacked(packed);
    packed = null;
  };
  const op: RequestOp = {
    object: false,
    elementBytes: 0,
    immediateStatus: () => (dest === PROC_NULL ? procNullStatus() : new Status()),
    destroy: (r) => engine.destroy(r),
    complete: typed
      ? (r) => {
          release();
          return r.error;
        }
      : undefined,
    launch: () => {
      if (dest === PROC_NULL) return null;
      const payload = encode();
      if (mode === 'bsend') {
        try {
          launchBuffered(comm, payload, kind, dest, tag);
        } finally {
          release(); // copied into the attached buffer
        }
        return null;
      }
      if (rreq === null) {
        rreq = new RpiRequest();
        fillSend(comm, rreq, MODE_TYPE[mode], payload, kind, dest, tag);
        if (persistent) rreq.marks |= ReqMark.PERSIST;
        engine.build(rreq);
      } else {
        rreq.buf = payload;
        rreq.gather = null;
        rreq.gatherLength = 0;
        const proc = rreq.proc!;
        rreq.seq = proc.sendSeq = (proc.sendSeq + 1) >>> 0;
      }
      if (gathered !== null) useGather(rreq, gathered.list);
      const r = rreq;
      if (!persistent) rreq = null;
      engine.start(r);
      return r;
    },
  };
  return persistent ? new PersistentRequest(comm, call, op, true) : new Request(comm, call, op);
}

/**
 * A receive request: `(into, source?, tag?)` into a buffer, or `(source?, tag?)` of any value.
 * `source` defaults to ANY_SOURCE, `tag` to ANY_TAG.
 */
export function makeRecv(
  comm: Communicator,
  call: string,
  a: BufferLike | TypedMessage | number | undefined,
  b: number | undefined,
  c: number | undefined,
  persistent: boolean,
): Request<unknown> {
  const into = isBufferLike(a) || isTypedMessage(a) ? a : null;
  const source = (into ? b : (a as number | undefined)) ?? ANY_SOURCE;
  const tag = (into ? c : b) ?? ANY_TAG;
  const bad = checkSource(comm, source) ?? checkTag(comm, tag, true);
  if (bad) throw comm.raiseSync(bad, call);
  const engine = comm.host.engine;
  let layout: RecvLayout | null = null;
  if (isTypedMessage(into)) {
    try {
      layout = recvLayout(into, call, !persistent && stagingReusable(comm), scatterOffer(comm));
    } catch (err) {
      throw comm.raiseSync(err, call);
    }
  }
  const plain = layout ? null : (into as BufferLike | null);
  const kind = layout ? layout.kind : plain ? kindOf(plain) : DataKind.OBJECT;
  const bytes = layout ? layout.bytes : plain ? bytesOf(plain) : null;
  let rreq: RpiRequest | null = null;
  const op: RequestOp = {
    object: into === null,
    elementBytes: layout ? layout.elementBytes : plain ? elementSize(kind) : 0,
    complete: layout ? layout.finish : undefined,
    immediateStatus: procNullStatus,
    destroy: (r) => engine.destroy(r),
    launch: () => {
      if (source === PROC_NULL) return null;
      if (rreq === null) {
        rreq = new RpiRequest();
        fillRecv(comm, rreq, ReqType.RECV, bytes, kind, source, tag);
        if (layout) rreq.scatter = layout.scatter;
        if (persistent) rreq.marks |= ReqMark.PERSIST;
        engine.build(rreq);
      } else {
        rreq.buf = bytes;
        rreq.proc = source === ANY_SOURCE ? null : comm.remote[source]!;
      }
      const r = rreq;
      if (!persistent) rreq = null;
      engine.start(r);
      return r;
    },
  };
  return persistent ? new PersistentRequest(comm, call, op, true) : new Request(comm, call, op);
}

/**
 * Starts a request through the entry gate: now, or (checkpoint in progress) when the gate opens.
 * Held, the request is active from the caller's point of view; the rpi sees it later, and an
 * error then can only go to the error handler (the call that started it has returned).
 */
export function startRequest(comm: Communicator, r: Request<unknown>, call = r.callName): void {
  let held = false;
  comm.host.engine.gate.run(
    () => {
      try {
        r.begin();
      } catch (err) {
        const error = comm.raiseSync(err, call);
        if (!held) throw error;
      }
    },
    () => {
      held = true;
      r.pend();
    },
  );
}
