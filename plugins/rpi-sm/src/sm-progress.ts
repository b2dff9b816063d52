import { ANY, type ShmEndpoint } from '@ssi/shm';
import type { SmStats } from './sm-stats';

/** What progress drives: the sends waiting in the endpoint's queue, and every arriving record. */
export interface ProgressTargets {
  /** Completes the sends the endpoint wrote since the last look; true when one moved. */
  reapAll(): boolean;
  /**
   * One record from segment slot `from`; `inPlace`: `data` is the record in shared memory, valid
   * only during the call (copy what is kept), else a private copy.
   */
  onMessage(from: number, data: Uint8Array, inPlace: boolean): void;
  /** The endpoint failed: the MPI layer is told which peers are lost. */
  lost(err: unknown): void;
}

/**
 * Progress of the sm path, synchronous and from the event loop. A waiting MPI call spins in
 * `advance(true)` (up to `rpi_sm_spin_us`) and its message completes it without an event-loop
 * turn; `test`/`iprobe` poll once. While anyone spins, peers are told we are awake so their
 * sends need no futex wake. When nobody polls, the endpoint's loop sleeps until a record is
 * readable (`wakeLoop`).
 */
export class SmProgress {
  private closing = false;
  private loop: Promise<void> = Promise.resolve();
  /** `spinMs` of `advance(true)`: rpi_sm_spin_us (0 in block mode: one look, no spin). */
  readonly spinMs: number;
  /** `stayAwake` holds the endpoint awake until an event-loop turn without a spin. */
  private awake = false;
  /** `advance` ran since the last turn (someone polls: stay awake). */
  private polledThisTurn = false;

  constructor(
    private readonly ep: ShmEndpoint,
    private readonly targets: ProgressTargets,
    spinUs: number,
    private readonly stats: Pick<SmStats, 'wakeups'>,
  ) {
    this.spinMs = spinUs / 1000;
  }

  private readonly inPlace = (from: number, view: Uint8Array): void =>
    this.targets.onMessage(from, view, true);

  /** Starts taking records from the event loop when nobody polls. */
  start(): void {
    this.loop = this.wakeLoop();
  }

  get isClosing(): boolean {
    return this.closing;
  }

  /**
   * Progress now, without waiting: writes what the endpoint's send queue can take, completes the
   * sends it wrote, and takes every message that is here. True when anything moved. Failures of
   * the endpoint go to the MPI layer (`lost`), never to the caller.
   */
  poll(): boolean {
    if (this.closing) return false;
    try {
      let moved = this.ep.flushSends();
      moved = this.targets.reapAll() || moved;
      for (;;) {
        // a record that sits whole in its postbox is handled there (its payload copied once,
        // straight into the receive buffer); the rest is taken as a copy
        if (this.ep.recvInPlace(this.inPlace)) {
          moved = true;
          if (this.ep.pollable()) continue;
          return true; // nothing more (a few loads instead of a whole tryRecv)
        }
        const m = this.ep.tryRecv(ANY);
        if (m === undefined) return moved;
        this.targets.onMessage(m.from, m.data, false);
        moved = true;
      }
    } catch (err) {
      this.targets.lost(err);
      return true;
    }
  }

  /**
   * The rpi's `advance` (a polling module, see `RpiActions.advance`): one `poll`, and with
   * `spin` more of them until something moved or `rpi_sm_spin_us` passed. Whoever polls (a
   * spinning wait, the MPI layer's polling window, a `test` loop) has the endpoint tell peers that
   * we are awake, so their sends need no futex wake (`stayAwake`).
   */
  advance(spin: boolean): boolean {
    this.polling();
    if (this.poll()) return true;
    if (!spin || this.spinMs <= 0 || this.closing) return false;
    const end = performance.now() + this.spinMs;
    // between polls, only the postbox heads and queues are looked at (`pollable`): a cheap spin
    // sees an arriving record sooner than one that runs the whole poll each time
    for (let n = 1; ; n++) {
      if (this.ep.pollable() && this.poll()) return true;
      if ((n & 15) === 0 && (this.closing || performance.now() > end)) return false;
    }
  }

  /** Someone polls now (`advance`, the fast receive): peers are told we are awake. */
  polling(): void {
    this.polledThisTurn = true;
    this.stayAwake();
  }

  /**
   * Tells peers we are awake (no futex wake per message) until the next turn of the event loop:
   * a ping-pong of waits that complete spinning keeps it, and a rank that stops calling MPI
   * lets the endpoint's loop sleep and wake for messages again one turn later.
   */
  private stayAwake(): void {
    if (this.awake) return;
    this.awake = true;
    this.ep.holdAwake();
    setImmediate(this.letSleep);
  }

  /**
   * At the next event-loop turn: still awake if `advance` ran during the last one (the MPI
   * layer's spin-mode loop, waits that keep spinning, a test loop), else the endpoint's loop may
   * sleep again.
   * Releasing while a rank keeps spinning would make every message of its peer a futex wake
   * (and a wake-up of the helper thread on the rank's own core).
   */
  private readonly letSleep = (): void => {
    if (this.closing) return;
    if (this.polledThisTurn) {
      this.polledThisTurn = false;
      setImmediate(this.letSleep);
      return;
    }
    this.awake = false;
    this.ep.releaseAwake();
  };

  /**
   * Takes messages that come while no MPI call polls: the endpoint's loop sleeps (futex) until
   * one is readable. After a turn that took something the event loop runs once before the next
   * look, so a stream of messages never starves timers and the tcp half.
   */
  private async wakeLoop(): Promise<void> {
    try {
      for (;;) {
        await this.ep.readable();
        if (this.poll()) {
          this.stats.wakeups++;
          await new Promise<void>((r) => setImmediate(r));
        }
      }
    } catch (err) {
      if (!this.closing) this.targets.lost(err);
    }
  }

  /** Stops: the endpoint closes, and the wake loop ends. */
  async stop(): Promise<void> {
    this.closing = true;
    this.ep.close();
    await this.loop;
  }
}
