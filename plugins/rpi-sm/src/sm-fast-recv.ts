import type { RpiHost, RpiRequest } from '@ssi/mpi';
import {
  ENVELOPE_BYTES,
  EnvFlag,
  FastRecv,
  type FastRecvResult,
  MessageHeader,
  PROTOCOL_MASK,
} from '@ssi/mpi';
import type { ShmEndpoint } from '@ssi/shm';
import type { PeerTable } from './peer-state';
import type { SmStats } from './sm-stats';
import type { WireWords } from './wire-words';

/** Spin looks between two looks at the clock and at the other peers (a few µs). */
const LOOK_EVERY = 128;

/** What the fast receive needs of the path's progress (`SmProgress`). */
export interface FastRecvProgress {
  /** `rpi_sm_spin_us` in ms: how long a waiting call may spin. */
  readonly spinMs: number;
  readonly isClosing: boolean;
  /** Someone polls now: peers are told we are awake (see `SmProgress.advance`). */
  polling(): void;
}

/**
 * The sm path's fast blocking receive (`RpiActions.fastrecv`): the MPI layer's receive from one
 * on-node peer while nothing else is active. It waits for that peer's next postbox record (up
 * to `rpi_sm_spin_us`) and takes it in place when it is an eager message the receive matches
 * (`host.matchFast`): the envelope is read as words in shared memory and the payload copied
 * once into the receive buffer. Anything else (a control record, a long message, another
 * communicator or tag, a message that would truncate) stays where it is for the usual path, and
 * so does the whole receive as soon as anything else needs progress (another peer's record, a
 * queued send): the usual path polls everything.
 */
export class SmFastRecv {
  private readonly header = new MessageHeader();

  constructor(
    private readonly host: RpiHost,
    private readonly ep: ShmEndpoint,
    private readonly peers: PeerTable,
    private readonly progress: FastRecvProgress,
    private readonly words: WireWords,
    private readonly stats: Pick<SmStats, 'fastReceives'>,
  ) {}

  take(req: RpiRequest): FastRecvResult {
    const peer = this.peers.find(req.proc!);
    if (peer === undefined) return FastRecv.DECLINED; // off-node: tcp's
    if (!this.words.usable || peer.eagerBodyFor !== null || peer.bodies.length > 0)
      return FastRecv.DECLINED;
    const ep = this.ep;
    const slot = peer.index;
    try {
      if (ep.pollableBesides(slot)) return FastRecv.DECLINED;
      this.progress.polling();
      let view = ep.peekFrom(slot);
      if (view !== null) return this.tryTake(req, slot, view);
      const spinMs = this.progress.spinMs;
      if (spinMs <= 0) return FastRecv.DECLINED;
      // the clock and the rest of the endpoint are looked at every LOOK_EVERY looks (a clock
      // read costs ~40 ns, a spin look ~10): a message that comes meanwhile waits for neither
      let end = 0;
      for (let n = 1; ; n++) {
        view = ep.peekFrom(slot);
        if (view !== null) return this.tryTake(req, slot, view);
        if (n % LOOK_EVERY === 0) {
          if (this.progress.isClosing || ep.pollableBesides(slot)) return FastRecv.DECLINED;
          const now = performance.now();
          if (end === 0) end = now + spinMs;
          else if (now > end) return FastRecv.WAITED;
        }
      }
    } catch {
      return this.leave(slot); // the usual path meets the failure and reports it
    }
  }

  /** The next record of `slot` is here: taken when it is an eager message `req` matches. */
  private tryTake(req: RpiRequest, slot: number, view: Uint8Array): FastRecvResult {
    if (view.byteLength < ENVELOPE_BYTES) return this.leave(slot); // not to be taken in place
    const words = this.words;
    const w = words.at(view);
    // an inline eager message, nothing else (no synchronous, long or control record)
    const inline = view.byteLength === ENVELOPE_BYTES + words.length(w);
    if ((words.flags(w) & PROTOCOL_MASK) !== EnvFlag.SHORT || !inline) return this.leave(slot);
    words.readHeader(w, this.header);
    if (!this.host.matchFast(req, this.header)) return this.leave(slot);
    words.copyOut(view.byteOffset + ENVELOPE_BYTES, req.buf!, req.stLength);
    this.ep.skipPeeked(slot);
    this.stats.fastReceives++;
    return FastRecv.DONE;
  }

  /** Leaves the peeked record for the usual path. */
  private leave(slot: number): FastRecvResult {
    this.ep.leavePeeked(slot);
    return FastRecv.DECLINED;
  }
}
