import { wakeWord } from './futex';
import { P, procLineOffset } from './layout';
import type { ShmSegment } from './segment';

/**
 * How the processes of a segment wake each other: each process has a doorbell word (a counter), a
 * `sleeping` flag and a `waitPool` flag in its line. Every index here is into `seg.i32`.
 *
 * SLEEP / WAKE. An awake process (spinning, or looking for work) polls the heads of its incoming
 * postboxes and its doorbell. A process that found nothing to do
 *   1. read the doorbell value `seen` *before* it looked for work,
 *   2. spins for spinUs polling postboxes and doorbell (no flag set: peers need no syscall),
 *   3. sets `sleeping` = 1, looks again (doorbell still `seen`? postboxes still empty?), and sleeps
 *      in FUTEX_WAIT(doorbell, seen) on its helper thread.
 * A producer that published a record (Atomics.store of head) then does Atomics.load(sleeping) and,
 * only if set, Atomics.add(doorbell) + FUTEX_WAKE (`notifyMessage`). Dekker on (head, sleeping), all
 * operations sequentially consistent: either the sleeper's second look (after its store of
 * sleeping) sees the new head, or the producer's load sees sleeping = 1 and rings; a ring that lands
 * between the second look and the sleep changes the doorbell, so FUTEX_WAIT (which compares in the
 * kernel) returns at once. Events other than messages (room freed in a postbox whose producer set
 * producerWaiting, pool blocks freed for a process that set waitPool, a local kick) always
 * Atomics.add the doorbell after publishing the event and wake if `sleeping` (`ring`); since `seen`
 * was read before the sleeper checked those conditions, the same argument holds. producerWaiting
 * and waitPool are themselves Dekker flags: set, then re-check (room / allocation); the other side
 * publishes (tail store / free), then reads the flag.
 */
export class Doorbells {
  private readonly bellIdx: number[] = [];
  private readonly sleepIdx: number[] = [];
  private readonly waitPoolIdx: number[] = [];
  /** Our own doorbell, flag `sleeping` and flag `waitPool`. */
  readonly myBell: number;
  private readonly mySleep: number;
  private readonly myWaitPool: number;

  constructor(
    private readonly seg: ShmSegment,
    private readonly index: number,
  ) {
    const l = seg.layout;
    for (let q = 0; q < l.nprocs; q++) {
      const line = procLineOffset(l, q) >> 2;
      this.bellIdx.push(line + P.bell);
      this.sleepIdx.push(line + P.sleeping);
      this.waitPoolIdx.push(line + P.waitPool);
    }
    this.myBell = this.bellIdx[index]!;
    this.mySleep = this.sleepIdx[index]!;
    this.myWaitPool = this.waitPoolIdx[index]!;
  }

  /**
   * A record was published in the postbox to `q`: wake `q` only if it sleeps. A process that is
   * awake polls its postboxes itself, so the common (spinning) case costs one load of a line that
   * stays shared, instead of a read-modify-write that would steal it.
   */
  notifyMessage(q: number): void {
    const i32 = this.seg.i32;
    if (Atomics.load(i32, this.sleepIdx[q]!) !== 0) {
      const b = this.bellIdx[q]!;
      Atomics.add(i32, b, 1);
      wakeWord(this.seg, b << 2, 0);
    }
  }

  /** Something other than a message (room, pool blocks, a kick) for `q`: always ring. */
  ring(q: number): void {
    const i32 = this.seg.i32;
    const b = this.bellIdx[q]!;
    Atomics.add(i32, b, 1);
    if (Atomics.load(i32, this.sleepIdx[q]!) !== 0) wakeWord(this.seg, b << 2, 0);
  }

  /** Our doorbell's value now: read before looking for work, so a ring after the look shows. */
  mine(): number {
    return Atomics.load(this.seg.i32, this.myBell);
  }

  /** Announce (1) or withdraw (0) that we sleep: peers' messages ring us only while it is 1. */
  setSleeping(v: 0 | 1): void {
    Atomics.store(this.seg.i32, this.mySleep, v);
  }

  /** Announce (1) or withdraw (0) that we wait for pool blocks (a Dekker flag, as `sleeping`). */
  setWaitingForPool(v: 0 | 1): void {
    Atomics.store(this.seg.i32, this.myWaitPool, v);
  }

  /** We freed pool blocks: ring every peer that announced it waits for them. */
  wakePoolWaiters(): void {
    const i32 = this.seg.i32;
    for (let q = 0; q < this.bellIdx.length; q++) {
      if (q === this.index) continue;
      const w = this.waitPoolIdx[q]!;
      if (Atomics.load(i32, w) !== 0 && Atomics.exchange(i32, w, 0) !== 0) this.ring(q);
    }
  }

  /** The words of `q`'s line, for diagnostics (plain reads). */
  wordsOf(q: number): { bell: number; sleeping: number; waitPool: number } {
    const i32 = this.seg.i32;
    return {
      bell: i32[this.bellIdx[q]!]!,
      sleeping: i32[this.sleepIdx[q]!]!,
      waitPool: i32[this.waitPoolIdx[q]!]!,
    };
  }
}
