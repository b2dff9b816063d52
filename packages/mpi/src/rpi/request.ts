import { DataKind } from '../data';
import type { MpiError } from '../errors';
import type { Proc } from '../proc';
import type { RecvScatter } from './types';

/** What a request does (`rq_type`). Blocking or not is a flag, not a type. */
export const ReqType = {
  /** Standard mode send. */
  SEND: 1,
  /** Buffered mode send (the rpi sees the internal standard send from the attached buffer). */
  BSEND: 2,
  /** Synchronous mode send: done only once the receiver has matched it. */
  SSEND: 3,
  /** Ready mode send. */
  RSEND: 4,
  /** Receive. */
  RECV: 5,
  /** Probe. */
  PROBE: 6,
} as const;
export type ReqTypeValue = (typeof ReqType)[keyof typeof ReqType];

/**
 * The life cycle of Fig. 5.2: init (built, not progressed) → start (active, may be cancelled)
 * → active (transfer under way) → done. Persistent requests go back to init when done.
 */
export const ReqState = {
  INIT: 0,
  START: 1,
  ACTIVE: 2,
  DONE: 3,
} as const;
export type ReqStateValue = (typeof ReqState)[keyof typeof ReqState];

/** Marks that last for the life of a request (`rq_marks`); the rpi only reads them. */
export const ReqMark = {
  PERSIST: 1 << 0,
  /** A send (data leaves this process). */
  SOURCE: 1 << 1,
  /** A receive (data arrives in this process). */
  DEST: 1 << 2,
  /** Created by a blocking call. */
  BLKTYPE: 1 << 3,
  /** The buffer belongs to the library (buffered sends, receives without a buffer). */
  DYNBUF: 1 << 4,
} as const;

/** Flags of one pass through the active state (`rq_flags`), reset by every start. */
export const ReqFlag = {
  /** Cancellation was requested. */
  CANCEL: 1 << 0,
  /** The request is blocking. */
  BLOCK: 1 << 1,
  /** The message was longer than the receive buffer (the rpi sets this). */
  TRUNC: 1 << 2,
  /** Freed by the user while active: the MPI layer forgets it when done. */
  ORPHAN: 1 << 3,
  /** Generic marking. */
  MARK: 1 << 4,
} as const;

/**
 * An MPI request as the rpi module sees it (App. C.1.4, `struct _req`). The MPI layer fills the
 * arguments of the call; the rpi progresses the request, fills the status of receives and keeps
 * its own state in `rpi`. The rpi changes only `state`, `flags & TRUNC`, the status fields,
 * `buf` of a receive without a buffer, `proc` of an ANY_SOURCE receive, and `rpi`.
 */
export class RpiRequest {
  /** Unique among this process's live requests; rpi modules may put it in envelopes. */
  id = 0;
  type: ReqTypeValue = ReqType.RECV;
  state: ReqStateValue = ReqState.INIT;
  marks = 0;
  flags = 0;

  /**
   * The message bytes (`rq_packbuf`): what to send, or where to receive. A receive with a null
   * `buf` accepts a message of any length: the rpi sets `buf` to memory of exactly the message's
   * length (it may adopt a buffer it already holds, e.g. an unexpected message's).
   */
  buf: Uint8Array | null = null;
  /**
   * A send's bytes as ranges of the user's buffer, in wire order, with `buf` null: only for a
   * module that declares `RpiActions.gather`, and only as its thresholds allow. `gatherLength`
   * is their total. Null for every other request.
   */
  gather: readonly Uint8Array[] | null = null;
  gatherLength = 0;
  /**
   * A receive's destination as a layout (a derived datatype) instead of `buf`, with `buf` null:
   * only for a module that declares `RpiActions.scatter`, and only as its threshold allows. Null
   * for every other request.
   */
  scatter: RecvScatter | null = null;
  /** `DataKind` of the bytes sent, or of the receive buffer (`OBJECT` when receiving without one). */
  kind: number = DataKind.OBJECT;
  /** Peer rank in the communicator: destination of a send, source of a receive (or ANY_SOURCE). */
  rank = 0;
  tag = 0;
  /** Context id of the communicator (`rq_cid`). */
  cid = 0;
  /** This process's rank in the communicator: the source rank that goes in an envelope. */
  myRank = 0;
  /** Sequence number of a send (set by the MPI layer), or of the message a receive got. */
  seq = 0;
  /** The peer process; null for an ANY_SOURCE receive until the rpi knows the sender. */
  proc: Proc | null = null;

  /** Status of a receive or probe, filled by the rpi: sender's rank, tag, bytes, kind. */
  stSource = 0;
  stTag = 0;
  stLength = 0;
  stKind: number = DataKind.BUFFER;
  /** Set when a cancellation succeeded. */
  cancelled = false;
  /** An error the rpi or the MPI layer attached (truncation, lost peer). */
  error: MpiError | null = null;

  /** The rpi module's own state for this request (`rq_rpi`). */
  rpi: unknown = null;

  /** Links of the matching queues (used by `Matcher`). */
  qPrev: RpiRequest | null = null;
  qNext: RpiRequest | null = null;
  qOrder = 0;
  qList: unknown = null;

  /** Links of the active request list (MPI layer only). */
  aPrev: RpiRequest | null = null;
  aNext: RpiRequest | null = null;
  /** MPI layer only: who to tell when the request is done. */
  onDone: ((req: RpiRequest) => void) | null = null;
  /** MPI layer only: the public object / communicator this request belongs to. */
  owner: unknown = null;

  /** Clears the per-start state (flags except BLOCK, status, error). */
  resetForStart(): void {
    this.flags &= ReqFlag.BLOCK;
    this.stSource = 0;
    this.stTag = 0;
    this.stLength = 0;
    this.stKind = DataKind.BUFFER;
    this.cancelled = false;
    this.error = null;
  }

  get isSend(): boolean {
    return this.type !== ReqType.RECV && this.type !== ReqType.PROBE;
  }

  /** For messages: "recv from 3 tag 7 cid 0". */
  describe(): string {
    const what =
      this.type === ReqType.RECV ? 'recv from' : this.type === ReqType.PROBE ? 'probe' : 'send to';
    return `${what} ${this.rank} tag ${this.tag} cid ${this.cid}`;
  }
}
