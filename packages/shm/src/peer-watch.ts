import type { EndpointStatus } from './endpoint-status';
import { ShmError } from './errors';
import { PROC_CLOSED } from './layout';
import { isProcessAlive } from './liveness';
import type { PoolPath } from './pool-path';
import type { Postboxes } from './postboxes';
import type { Receives } from './receives';
import type { ShmSegment } from './segment';

/**
 * While the endpoint waits, it looks at its peers every `periodMs`: a wait for a peer that died,
 * or that closed with nothing left for us, would otherwise never end. The progress loop calls it
 * (its futex wait times out after `periodMs`), since only a waiting endpoint needs it.
 */
export class PeerWatch {
  private last = Date.now();
  private readonly index: number;
  private readonly boxes: Postboxes;
  private readonly large: PoolPath;
  private readonly receives: Receives;
  private readonly status: EndpointStatus;

  constructor(
    private readonly seg: ShmSegment,
    readonly periodMs: number,
    parts: { boxes: Postboxes; large: PoolPath; receives: Receives; status: EndpointStatus },
  ) {
    this.index = seg.index;
    this.boxes = parts.boxes;
    this.large = parts.large;
    this.receives = parts.receives;
    this.status = parts.status;
  }

  /** Is a look due (the last one was `periodMs` ago)? */
  due(): boolean {
    return Date.now() - this.last >= this.periodMs;
  }

  /**
   * Throws when the segment broke or a peer died (the endpoint then fails as a whole). When
   * `idle` (a wait timed out with nothing arriving), also fails the receives posted for peers
   * that closed and left nothing in their postbox or in progress.
   */
  check(idle: boolean): void {
    this.last = Date.now();
    if (this.seg.isBroken) throw this.status.broken('was');
    for (let q = 0; q < this.seg.layout.nprocs; q++) {
      if (q === this.index) continue;
      const pid = this.seg.pidOf(q);
      // a peer that closed its endpoint and left is not dead; one that vanished without closing is
      if (pid !== 0 && this.seg.stateOf(q) !== PROC_CLOSED && !isProcessAlive(pid)) {
        throw new ShmError(
          'PEER_DEAD',
          `process ${q} (pid ${pid}) of shared segment ${this.seg.name} died; messages to and from it cannot complete: end the job`,
        );
      }
      if (idle && this.seg.stateOf(q) === PROC_CLOSED && this.leftNothing(q)) {
        const err = new ShmError(
          'PEER_DEAD',
          `process ${q} closed its endpoint; nothing more will come from it`,
        );
        this.receives.failFrom(q, err);
      }
    }
  }

  private leftNothing(q: number): boolean {
    return !this.boxes.incoming(q) && !this.large.inProgressFrom(q);
  }
}
