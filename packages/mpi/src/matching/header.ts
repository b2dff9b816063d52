/**
 * The fields of an arriving message that matching and status need (App. C.1.8's envelope without
 * the transport's own bits). A transport keeps one record per connection and refills it for every
 * envelope it reads, so handing a message to the MPI layer allocates nothing and names every
 * field (no long positional argument lists on the hot path).
 */
export class MessageHeader {
  /** Context id of the communicator. */
  cid = 0;
  /** Sender's rank in the communicator. */
  rank = 0;
  tag = 0;
  /** Message length in bytes (the whole message, also for a rendezvous request). */
  length = 0;
  /** `DataKind` of the bytes sent. */
  kind = 0;
  /** Sequence number of the message (per sender → receiver). */
  seq = 0;
}

/** What matching reads of a message: a `MessageHeader` or a queued `UnexpectedMessage`. */
export interface MessageFields {
  readonly cid: number;
  readonly rank: number;
  readonly tag: number;
  readonly length: number;
  readonly kind: number;
  readonly seq: number;
}
