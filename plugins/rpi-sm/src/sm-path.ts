import type { FastRecvResult, Proc, RpiHost, RpiRequest, UnexpectedMessage } from '@ssi/mpi';
import { ENVELOPE_BYTES } from '@ssi/mpi';
import { isProcessAlive, type ShmEndpoint } from '@ssi/shm';
import { PeerTable } from './peer-state';
import { SingleCopy } from './single-copy';
import { SmFastRecv } from './sm-fast-recv';
import { SmProgress } from './sm-progress';
import { SmReceives } from './sm-receives';
import { type SmLimits, SmSends } from './sm-sends';
import { describeStats, newStats } from './sm-stats';
import { WireWords } from './wire-words';

/**
 * The on-node path of the sm rpi: MPI messages between the processes of one node through their
 * segment's endpoint (postboxes and pool of `@ssi/shm`, in order per pair). This class wires
 * its parts together: the peers (`peer-state.ts`), the sending side (`sm-sends.ts`), the
 * receiving side (`sm-receives.ts`), progress (`sm-progress.ts`) and single copy
 * (`single-copy.ts`).
 *
 * Wire: every envelope is the 32-byte envelope of `@ssi/mpi` (`writeEnvelope`, tcp's framing,
 * `seq` included), sent as one postbox record.
 * - Eager (payload up to S, `rpi_sm_short`): the payload rides in the envelope's record, or, when
 *   the two do not fit one record, in the next record of the pair.
 * - Rendezvous (payload above S): a request to send (LONG), with the address of the body when
 *   single copy is on (`rpi_sm_single_copy`). Once a receive matched, the receiver either reads
 *   the body out of the sender's memory into the receive buffer and answers TAKEN (one copy), or
 *   answers with a clear to send (ACK|LONG) and the body follows alone through the pool; the
 *   receiver knows whose body comes next from a sender (the order of its clears), so the endpoint
 *   copies each chunk from the pool straight into the posted buffer (`intoFor`).
 * - Synchronous eager sends wait for an ACK; a cancel asks the receiver to withdraw a synchronous
 *   or long message it has not matched (LONG sends are cancellable until the receiver answers).
 */
export class SmPath {
  private readonly peers: PeerTable;
  private readonly limits: SmLimits;
  private readonly single: SingleCopy;
  readonly stats = newStats();
  private sends!: SmSends;
  private receives!: SmReceives;
  private progress!: SmProgress;
  private fast!: SmFastRecv;

  constructor(
    private readonly host: RpiHost,
    localProcs: readonly Proc[],
    shortLimit: number,
    singleCopy: boolean,
    splitMin: number,
  ) {
    this.peers = new PeerTable(localProcs, host.myProc);
    this.limits = { eagerMax: shortLimit, inlineMax: shortLimit - ENVELOPE_BYTES };
    this.single = new SingleCopy(singleCopy, splitMin);
  }

  /** For the endpoint's options: the buffer a sender's next large message (a body) goes into. */
  readonly intoFor = (from: number, length: number): Uint8Array | undefined =>
    this.receives?.intoFor(from, length);

  /** Why long messages are not read out of the sender's memory here, or null (they are). */
  get singleCopyOff(): string | null {
    return this.single.reason;
  }

  /**
   * Starts sending and taking messages (once the whole rpi is set up): synchronously in
   * `advance` while MPI calls wait or test, and from the event loop when the endpoint says one
   * is readable.
   */
  startReceiving(ep: ShmEndpoint, spinUs: number, memory: ArrayBufferLike): void {
    const { host, peers, limits, single, stats } = this;
    const lost = (err: unknown) => this.lost(err);
    const words = new WireWords(memory);
    this.sends = new SmSends(host, ep, peers, limits, single, stats, lost, words);
    this.receives = new SmReceives(host, peers, limits, this.sends, single, stats);
    const receives = this.receives;
    this.progress = new SmProgress(
      ep,
      { reapAll: this.sends.reapAll, onMessage: (f, d, p) => receives.onMessage(f, d, p), lost },
      spinUs,
      stats,
    );
    this.fast = new SmFastRecv(host, ep, peers, this.progress, words, stats);
    this.progress.start();
  }

  has(proc: Proc): boolean {
    return this.peers.has(proc);
  }

  get peerList(): Proc[] {
    return this.peers.procs;
  }

  start(req: RpiRequest): void {
    this.sends.start(req);
  }

  /** `SmSends.fastsend`: null when `req.proc` is not on this node. */
  fastsend(req: RpiRequest): boolean | null {
    return this.sends.fastsend(req);
  }

  /** The fast receive (`SmFastRecv.take`); DECLINED when `req.proc` is not on this node. */
  fastrecv(req: RpiRequest): FastRecvResult {
    return this.fast.take(req);
  }

  cancel(req: RpiRequest): void {
    this.sends.cancel(req);
  }

  matched(req: RpiRequest, m: UnexpectedMessage): void {
    this.receives.matched(req, m);
  }

  advance(spin: boolean): boolean {
    return this.progress.advance(spin);
  }

  /** The endpoint failed (a peer died, the segment broke): tell the MPI layer which peers. */
  private lost(err: unknown): void {
    if (this.progress?.isClosing) return;
    const reason = `rpi sm: ${(err as Error)?.message ?? String(err)}`;
    const all = this.peerList;
    const dead = all.filter((p) => !isProcessAlive(p.gps.pid));
    for (const p of dead.length > 0 ? dead : all) this.host.peerFailed(p, reason);
  }

  destroy(req: RpiRequest): void {
    if (req.isSend) this.sends.forget(req);
    req.rpi = 0;
  }

  /** Stops the endpoint and the loop, then `closeSegment` (the creator's close unlinks). */
  async finalize(closeSegment: () => void): Promise<void> {
    await this.progress.stop();
    closeSegment();
  }

  /** For `rpi_verbose 10` at finalize (the tests read it). */
  describeStats(): string {
    return describeStats(this.stats);
  }
}
