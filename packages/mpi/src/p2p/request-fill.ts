import type { Communicator } from '../comm';
import { ANY_SOURCE, ANY_TAG, PROC_NULL } from '../constants';
import type { ReqTypeValue, RpiRequest } from '../rpi/request';
import { ReqMark, ReqType } from '../rpi/request';
import type { RpiGather, RpiScatter } from '../rpi/types';
import { Status } from '../status';

/** The four send modes of MPI-1 and the request type each becomes. */
export type SendMode = 'send' | 'bsend' | 'ssend' | 'rsend';
export const MODE_TYPE: Record<SendMode, ReqTypeValue> = {
  send: ReqType.SEND,
  bsend: ReqType.BSEND,
  ssend: ReqType.SSEND,
  rsend: ReqType.RSEND,
};

/** Fills a send of `comm`'s rank to `dest`; takes the next sequence number of the destination. */
export function fillSend(
  comm: Communicator,
  req: RpiRequest,
  type: ReqTypeValue,
  bytes: Uint8Array,
  kind: number,
  dest: number,
  tag: number,
): void {
  const proc = comm.remote[dest]!;
  req.type = type;
  req.marks = ReqMark.SOURCE;
  req.flags = 0;
  req.buf = bytes;
  req.gather = null;
  req.gatherLength = 0;
  req.scatter = null;
  req.kind = kind;
  req.rank = dest;
  req.tag = tag;
  req.cid = comm.cid;
  req.myRank = comm.rank;
  req.proc = proc;
  req.seq = proc.sendSeq = (proc.sendSeq + 1) >>> 0;
}

/**
 * What the selected rpi offers for gathering a send of `mode` to `dest` (`RpiActions.gather`),
 * or null: sends to self and buffered sends are copied by the MPI layer anyway.
 */
export function gatherOffer(comm: Communicator, mode: SendMode, dest: number): RpiGather | null {
  if (mode === 'bsend') return null;
  const engine = comm.host.engine;
  const offer = engine.actions.gather;
  return offer !== undefined && comm.remote[dest] !== engine.myProc ? offer : null;
}

/**
 * What the selected rpi offers for scattering a receive into its layout (`RpiActions.scatter`),
 * or null. Not while rollback logging is on (a cr module): the log keeps the received bytes by
 * reference to the receive buffer, which a scattered receive does not have.
 */
export function scatterOffer(comm: Communicator): RpiScatter | null {
  const engine = comm.host.engine;
  return engine.crLog === null ? (engine.actions.scatter ?? null) : null;
}

/**
 * Whether a one-shot receive may stage into reused memory, given back once it is unpacked. Not
 * while rollback logging is on: the log refers to the staged bytes until the rank's next quiet
 * point, and a later receive must not overwrite them there.
 */
export function stagingReusable(comm: Communicator): boolean {
  return comm.host.engine.crLog === null;
}

/** Makes a filled send carry `list` (ranges of the user's buffer) instead of packed bytes. */
export function useGather(req: RpiRequest, list: readonly Uint8Array[]): void {
  let n = 0;
  for (const r of list) n += r.byteLength;
  req.buf = null;
  req.gather = list;
  req.gatherLength = n;
}

/** Fills a receive (or probe) of `comm` from `source` (or ANY_SOURCE). */
export function fillRecv(
  comm: Communicator,
  req: RpiRequest,
  type: ReqTypeValue,
  buf: Uint8Array | null,
  kind: number,
  source: number,
  tag: number,
): void {
  req.type = type;
  req.marks = ReqMark.DEST;
  req.flags = 0;
  req.buf = buf;
  req.gather = null;
  req.gatherLength = 0;
  req.scatter = null;
  req.kind = kind;
  req.rank = source;
  req.tag = tag;
  req.cid = comm.cid;
  req.myRank = comm.rank;
  req.proc = source === ANY_SOURCE ? null : comm.remote[source]!;
  req.seq = 0;
}

/** The status of a call with PROC_NULL as its peer. */
export function procNullStatus(): Status {
  const st = new Status();
  st.source = PROC_NULL;
  st.tag = ANY_TAG;
  return st;
}
