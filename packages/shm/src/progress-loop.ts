import type { Doorbells } from './doorbells';
import type { EndpointStatus } from './endpoint-status';
import { waitWord } from './futex';
import type { PeerWatch } from './peer-watch';
import type { PoolPath } from './pool-path';
import type { Postboxes } from './postboxes';
import { ANY, type Receives } from './receives';
import type { ShmSegment } from './segment';
import type { SendQueue } from './send-queue';

/** The parts of an endpoint its progress loop drives. */
export interface LoopParts {
  readonly bells: Doorbells;
  readonly boxes: Postboxes;
  readonly large: PoolPath;
  readonly sends: SendQueue;
  readonly receives: Receives;
  readonly peers: PeerWatch;
  readonly status: EndpointStatus;
}

/**
 * The endpoint's own progress, for callers that await (`send` of a queued message, `recv`,
 * `readable`): while anything waits, it drains the postboxes, frees drained chunks, moves queued
 * sends, and when nothing moves spins for `spinNs`, then sleeps in a futex wait on our doorbell
 * (the protocol is in doorbells.ts). It runs only while there is work, and `kick` starts it again.
 */
export class ProgressLoop {
  private running = false;
  /**
   * recvInPlace is handing a record that still sits in its postbox to the visitor: the loop must
   * not start meanwhile (a send the visitor queues would run it synchronously, and its drain would
   * read past the record the visit holds); it starts once the record is freed (`endVisit`).
   */
  private visiting = false;
  private kickAfterVisit = false;
  /** The loop sleeps in FUTEX_WAIT with `sleeping` announced (see holdAwake). */
  private asleep = false;
  /** Between holdAwake and releaseAwake: the loop sleeps without announcing it. */
  private heldAwake = false;
  /** The doorbell value the sleeping loop waits to change. */
  private asleepOn = 0;
  private readonly bells: Doorbells;
  private readonly boxes: Postboxes;
  private readonly large: PoolPath;
  private readonly sends: SendQueue;
  private readonly receives: Receives;
  private readonly peers: PeerWatch;
  private readonly status: EndpointStatus;

  constructor(
    private readonly seg: ShmSegment,
    parts: LoopParts,
    private readonly spinNs: bigint,
    private readonly helperSpinNs: number,
    /** The loop failed (a dead peer, a corrupted record): the endpoint fails as a whole. */
    private readonly onFailure: (err: Error) => void,
  ) {
    this.bells = parts.bells;
    this.boxes = parts.boxes;
    this.large = parts.large;
    this.sends = parts.sends;
    this.receives = parts.receives;
    this.peers = parts.peers;
    this.status = parts.status;
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** Start the progress loop, or wake it if it sleeps. */
  kick(): void {
    if (this.visiting) {
      this.kickAfterVisit = true;
      return;
    }
    if (this.running) {
      this.bells.ring(this.seg.index);
      return;
    }
    this.running = true;
    this.run().then(undefined, this.onFailure);
  }

  /** A record held in its postbox is being visited: kicks wait until `endVisit`. */
  beginVisit(): void {
    this.visiting = true;
  }

  /** The visited record was freed: a kick that came meanwhile starts the loop now. */
  endVisit(): void {
    this.visiting = false;
    if (this.kickAfterVisit) {
      this.kickAfterVisit = false;
      this.kick();
    }
  }

  /** See `ShmEndpoint.holdAwake`: peers are told we are awake while the loop sleeps. */
  holdAwake(): void {
    this.heldAwake = true;
    if (this.asleep) this.bells.setSleeping(0);
  }

  /**
   * See `ShmEndpoint.releaseAwake`: a sleeping loop announces its sleep again and looks once more
   * (Dekker, see doorbells.ts): a message or an event (room, pool blocks) that came meanwhile
   * rings our own bell, which wakes it.
   */
  releaseAwake(): void {
    this.heldAwake = false;
    if (!this.asleep || this.seg.isClosed) return;
    this.bells.setSleeping(1);
    // a message, or an event that rang while peers thought us awake (no FUTEX_WAKE then)
    const rang = this.bells.mine() !== this.asleepOn;
    if (rang || this.boxes.incoming(ANY)) this.bells.ring(this.seg.index);
  }

  /** The endpoint closed: end our own wait, if the loop sleeps. */
  wakeToClose(): void {
    this.heldAwake = false;
    if (this.asleep) this.bells.setSleeping(1);
    this.bells.ring(this.seg.index);
  }

  private hasWork(): boolean {
    return (
      this.receives.waiting() ||
      this.receives.hasReaders() ||
      this.sends.any() ||
      this.large.hasFrees() ||
      this.large.inProgress()
    );
  }

  /**
   * The progress loop. loopBody clears `running` itself (stopped()) in the same tick as its last
   * hasWork() check: clearing it after an `await` would leave a window in which a kick() sees
   * running = true with no loop left to notice its work (that bug lost a send once). On an error
   * the endpoint fails as a whole, so clearing it late there is harmless.
   */
  private async run(): Promise<void> {
    try {
      await this.loopBody();
    } catch (err) {
      this.running = false;
      if (!this.status.closed) throw err; // after close(), the segment may be unmapped under us
    }
  }

  private async loopBody(): Promise<void> {
    const { bells, boxes, large, sends, status } = this;
    while (!status.closed && this.hasWork()) {
      const seen = bells.mine();
      let progressed = boxes.drain();
      if (large.hasFrees()) {
        await large.freeWaiting();
        if (status.closed) return this.stopped();
        bells.wakePoolWaiters();
        progressed = true;
      }
      if (sends.any()) {
        progressed = sends.advanceNow() || progressed;
        if (sends.stoppedAtLock) {
          await large.pool!.lock.run(() => undefined); // until the other holder let go
          if (status.closed) return this.stopped();
          continue;
        }
      }
      this.receives.wakeReaders();
      if (progressed || !this.hasWork()) continue;
      // idle: spin, then sleep on the doorbell (see doorbells.ts)
      if (this.spinNs > 0n && this.spinUntilChange(seen)) continue;
      // held awake (a synchronous poller takes the messages): sleep without announcing it;
      // releaseAwake announces it later and looks again
      if (!this.heldAwake) bells.setSleeping(1);
      // after announcing that we sleep, look again: a producer that did not see the flag published
      // before our look (message notifications ring only sleepers)
      if (bells.mine() === seen && !boxes.incoming(ANY)) {
        this.asleep = true;
        this.asleepOn = seen;
        const r = await waitWord(this.seg, bells.myBell << 2, seen, {
          timeoutMs: this.peers.periodMs,
          helperSpinNs: this.helperSpinNs,
        });
        this.asleep = false;
        if (status.closed || this.seg.isClosed) return this.stopped();
        bells.setSleeping(0);
        if (r === 'timed-out') this.peers.check(true);
      } else {
        bells.setSleeping(0);
      }
      if (this.peers.due()) this.peers.check(false);
    }
    this.stopped();
  }

  /** Spin up to `spinNs` for a ring of our doorbell or an incoming record; true when one came. */
  private spinUntilChange(seen: number): boolean {
    const end = process.hrtime.bigint() + this.spinNs;
    for (let n = 1; ; n++) {
      if (this.bells.mine() !== seen || this.boxes.incoming(ANY)) return true;
      if ((n & 63) === 0 && process.hrtime.bigint() >= end) return false;
    }
  }

  /** Called synchronously (same tick) with the loop's last look at its work. */
  private stopped(): void {
    this.running = false;
  }
}
