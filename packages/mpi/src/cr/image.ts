import { Packr } from 'msgpackr';
import { ErrorClass, MpiError } from '../errors';
import type { UnexpectedMessage } from '../matching/unexpected';
import type { Proc } from '../proc';
import { ReqType, type RpiRequest } from '../rpi/request';
import type { RollbackLog } from './rollback-log';

/** A message the checkpointed rank still had to receive: queued, or taken by a rolled-back receive. */
export interface KeptMessage {
  /** World rank of the sender. */
  src: number;
  cid: number;
  rank: number;
  tag: number;
  kind: number;
  seq: number;
  length: number;
  /** The bytes, or null when they had not arrived (a rendezvous whose body was never sent). */
  data: Uint8Array | null;
}

/**
 * The MPI layer's state in a checkpoint (what crtcp drained from the network ends up in the
 * unexpected queue first), with the rollback record of the `self` restart contract (see
 * `RollbackLog`). Indexed by world rank.
 */
export interface MpiImage {
  format: 1;
  rank: number;
  size: number;
  /** Per destination: the last sequence number used at the checkpoint. */
  sentUpTo: number[];
  /** Per destination: the first sequence number rolled back (to be sent again), 0 for none. */
  rollbackFrom: number[];
  /** Per source: the highest sequence number that had arrived. */
  arrivedUpTo: number[];
  /** Communicators are not in the image: a restarted program makes them again, in order. */
  kept: KeptMessage[];
}

/** What each restarted rank tells every other at `MPI.init` (in the GPS exchange). */
export interface RestartSummary {
  rollbackFrom: number[];
  arrivedUpTo: number[];
  /** Per source: the sequence numbers of the messages kept. */
  keptSeqs: number[][];
}

/** Takes the image of a quiet (drained, gate closed) MPI layer. */
export function takeImage(args: {
  procs: readonly Proc[];
  myProc: Proc;
  log: RollbackLog;
  active: readonly RpiRequest[];
  unexpected: readonly UnexpectedMessage[];
}): MpiImage {
  const size = args.procs.length;
  const byRank = (p: Proc) => p.gps.grank;
  const sentUpTo = new Array<number>(size).fill(0);
  const rollbackFrom = new Array<number>(size).fill(0);
  const arrivedUpTo = new Array<number>(size).fill(0);
  for (const p of args.procs) {
    sentUpTo[byRank(p)] = p.sendSeq;
    arrivedUpTo[byRank(p)] = p.recvSeq;
  }
  const rollBack = (dest: Proc, seq: number) => {
    const d = byRank(dest);
    if (rollbackFrom[d] === 0 || seq < rollbackFrom[d]!) rollbackFrom[d] = seq;
  };
  for (const s of args.log.sends) rollBack(s.dest!, s.seq);
  const kept: KeptMessage[] = [];
  for (const r of args.active) {
    if (r.proc === null) continue;
    if (r.type !== ReqType.RECV) rollBack(r.proc, r.seq);
    else if (r.seq !== 0) {
      // Matched, bytes still arriving: the sender's send is incomplete, so it is sent again.
      kept.push(keptOf(byRank(r.proc), r.cid, r.stSource, r.stTag, r.stKind, r.seq, null));
    }
  }
  for (const m of args.log.recvs) {
    kept.push(keptOf(byRank(m.source!), m.cid, m.rank, m.tag, m.kind, m.seq, copy(m.data)));
  }
  for (const m of args.unexpected) {
    const data = m.complete ? copy(m.data!.subarray(0, m.length)) : null;
    kept.push({
      ...keptOf(byRank(m.proc), m.cid, m.rank, m.tag, m.kind, m.seq, data),
      length: m.length,
    });
  }
  // Sends to self all arrived (the MPI layer delivered them itself).
  arrivedUpTo[byRank(args.myProc)] = args.myProc.sendSeq;
  return {
    format: 1,
    rank: byRank(args.myProc),
    size,
    sentUpTo,
    rollbackFrom,
    arrivedUpTo,
    kept,
  };
}

function keptOf(
  src: number,
  cid: number,
  rank: number,
  tag: number,
  kind: number,
  seq: number,
  data: Uint8Array | null,
): KeptMessage {
  return { src, cid, rank, tag, kind, seq, length: data?.byteLength ?? 0, data };
}

function copy(bytes: Uint8Array): Uint8Array {
  return Uint8Array.prototype.slice.call(bytes);
}

export function summaryOf(image: MpiImage): RestartSummary {
  const keptSeqs: number[][] = Array.from({ length: image.size }, () => []);
  for (const m of image.kept) keptSeqs[m.src]!.push(m.seq);
  return { rollbackFrom: image.rollbackFrom, arrivedUpTo: image.arrivedUpTo, keptSeqs };
}

/** What a restarted rank does with its image once it knows every rank's summary. */
export interface RestartPlan {
  /** Per destination: the sequence number to continue from (the last one used). */
  sendSeq: number[];
  /** Messages to queue again, per sender in sequence order. */
  restore: KeptMessage[];
  /** Per destination: sends the receiver already consumed for good (done without sending). */
  consumed: ConsumedRange[];
}

/** Sequence numbers `from..to` minus `kept`: what one receiver consumed of what is sent again. */
export interface ConsumedRange {
  from: number;
  to: number;
  kept: ReadonlySet<number>;
}

/** Works out the restart of rank `image.rank` from its image and everyone's summary. */
export function planRestart(image: MpiImage, all: readonly RestartSummary[]): RestartPlan {
  const me = image.rank;
  if (all.length !== image.size) {
    throw new MpiError(
      ErrorClass.ERR_OTHER,
      `the restarted job has ${all.length} processes but the checkpoint was taken of ${image.size}`,
    );
  }
  const sendSeq = image.sentUpTo.map((upTo, d) => {
    const from = image.rollbackFrom[d]!;
    return from > 0 ? from - 1 : upTo;
  });
  const restore = image.kept
    .filter((m) => {
      const resentFrom = all[m.src]!.rollbackFrom[me]!;
      return resentFrom === 0 || m.seq < resentFrom;
    })
    .sort((a, b) => a.src - b.src || a.seq - b.seq);
  for (const m of restore) {
    if (m.data === null) {
      throw new MpiError(
        ErrorClass.ERR_OTHER,
        `checkpoint image of rank ${me}: the message seq ${m.seq} from rank ${m.src} has no ` +
          'data but its sender does not send it again; the checkpoint is inconsistent',
      );
    }
  }
  const consumed = all.map((peer, d) => {
    const from = image.rollbackFrom[d]!;
    return { from, to: from > 0 ? peer.arrivedUpTo[me]! : 0, kept: new Set(peer.keptSeqs[me]) };
  });
  return { sendSeq, restore, consumed };
}

const packr = new Packr({ useRecords: false });

export function encodeImage(image: MpiImage): Uint8Array {
  return packr.pack(image);
}

/** Decodes an image read from a checkpoint, checking its shape (a damaged file fails here). */
export function decodeImage(bytes: Uint8Array, where: string): MpiImage {
  let image: MpiImage;
  try {
    image = packr.unpack(bytes) as MpiImage;
  } catch (err) {
    throw new MpiError(
      ErrorClass.ERR_OTHER,
      `${where}: not an MPI image: ${(err as Error).message}`,
    );
  }
  const ok =
    image !== null &&
    typeof image === 'object' &&
    image.format === 1 &&
    Number.isInteger(image.size) &&
    Array.isArray(image.sentUpTo) &&
    image.sentUpTo.length === image.size &&
    Array.isArray(image.rollbackFrom) &&
    image.rollbackFrom.length === image.size &&
    Array.isArray(image.arrivedUpTo) &&
    image.arrivedUpTo.length === image.size &&
    Array.isArray(image.kept) &&
    image.kept.every((m) => Number.isInteger(m.src) && m.src >= 0 && m.src < image.size);
  if (!ok) {
    throw new MpiError(
      ErrorClass.ERR_OTHER,
      `${where}: the MPI image is not of format 1 or is damaged`,
    );
  }
  for (const m of image.kept) if (m.data !== null) m.data = new Uint8Array(m.data);
  return image;
}
