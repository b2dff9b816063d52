import { DataKind, kindName } from '../data';
import { ErrorClass, MpiError } from '../errors';
import type { Proc } from '../proc';
import { ReqFlag, type RpiRequest } from '../rpi/request';
import type { MessageFields } from './header';

/**
 * Records in a receive (or probe) what message it matched: the status fields, the sender, and a
 * truncation or type error. Returns the number of bytes to deliver into `req.buf`.
 */
export function matchStatus(req: RpiRequest, proc: Proc, msg: MessageFields): number {
  const { rank: source, tag, length, kind, seq } = msg;
  req.stSource = source;
  req.stTag = tag;
  req.stKind = kind;
  req.seq = seq;
  if (req.proc === null) req.proc = proc;
  const buf = req.buf;
  const scatter = req.scatter;
  if (buf === null && scatter === null) {
    req.stLength = length;
    return length;
  }
  const room = buf !== null ? buf.byteLength : scatter!.length;
  let deliver = length;
  if (scatter !== null) req.error = scatter.matched(kind, length);
  if (length > room) {
    deliver = room;
    req.flags |= ReqFlag.TRUNC;
    req.error ??= new MpiError(
      ErrorClass.ERR_TRUNCATE,
      `message truncated: ${length} bytes from rank ${source} (tag ${tag}) do not fit the ` +
        `receive buffer of ${room} bytes; probe first to size the buffer`,
    );
  } else if (
    req.error === null &&
    kind === DataKind.OBJECT &&
    req.kind !== DataKind.OBJECT &&
    length > 0
  ) {
    req.error = new MpiError(
      ErrorClass.ERR_TYPE,
      `rank ${source} sent a msgpackr-encoded object (tag ${tag}) but the receive buffer is a ` +
        `${kindName(req.kind)}; receive objects without a buffer: comm.recv(source, tag)`,
    );
  }
  req.stLength = deliver;
  return deliver;
}

/**
 * Delivers a complete message into a matched receive: copies into its buffer (or its layout,
 * `req.scatter`), or, for a receive without a buffer, adopts `data` when the caller says it may (else copies).
 */
export function deliverBytes(req: RpiRequest, data: Uint8Array, adopt: boolean): void {
  const n = req.stLength;
  if (req.scatter !== null) {
    if (n > 0) req.scatter.write(n === data.byteLength ? data : data.subarray(0, n), 0);
    return;
  }
  if (req.buf === null) {
    if (adopt) req.buf = n === data.byteLength ? data : data.subarray(0, n);
    else {
      const copy = Buffer.allocUnsafeSlow(n);
      copy.set(n === data.byteLength ? data : data.subarray(0, n));
      req.buf = copy;
    }
    return;
  }
  if (n > 0) req.buf.set(n === data.byteLength ? data : data.subarray(0, n));
}
