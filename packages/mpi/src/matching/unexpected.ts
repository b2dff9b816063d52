import type { Proc } from '../proc';
import type { RpiRequest } from '../rpi/request';
import type { MessageFields } from './header';

/**
 * A message that arrived before a matching receive was posted (App. C.1.9, `cbuf_msg`), queued
 * by the MPI layer: its envelope, the payload of an eager message (possibly still arriving), or
 * nothing for a rendezvous request. The transport that queued it keeps its own state in `extra`
 * and is handed the message back (`RpiActions.matched`) when a receive takes it.
 */
export class UnexpectedMessage implements MessageFields {
  qPrev: UnexpectedMessage | null = null;
  qNext: UnexpectedMessage | null = null;
  qOrder = 0;
  qList: unknown = null;

  readonly cid: number;
  /** Sender's rank in the communicator. */
  readonly rank: number;
  readonly tag: number;
  /** Message length in bytes. */
  readonly length: number;
  readonly kind: number;
  readonly seq: number;

  /** Eager payload; for a message still arriving, `received < length`. */
  data: Uint8Array | null = null;
  received = 0;
  /** Send request of this same process when the message is a send to self (`cm_req`). */
  sender: RpiRequest | null = null;
  /** A receive that matched the message while its payload was still arriving. */
  waiting: RpiRequest | null = null;
  /** The transport's own state (e.g. the sender's request id for acknowledgements). */
  extra: unknown = null;
  /** Queued again from a checkpoint at restart: the MPI layer delivers it, no transport. */
  restored = false;

  constructor(
    /** The sending process. */
    readonly proc: Proc,
    header: MessageFields,
    /** Envelope flags as the transport received them (the transport's to interpret). */
    readonly flags: number,
  ) {
    this.cid = header.cid;
    this.rank = header.rank;
    this.tag = header.tag;
    this.length = header.length;
    this.kind = header.kind;
    this.seq = header.seq;
  }

  get complete(): boolean {
    return this.data !== null && this.received >= this.length;
  }
}
