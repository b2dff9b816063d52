import { ShmError } from './errors';
import { type FutexMemory, waitWord, wakeWord } from './futex';
import { isProcessAlive } from './liveness';

export interface LockOptions {
  /** Synchronous spinning (CAS attempts) before yielding / sleeping, ns. Default 20 µs. */
  spinNs?: number;
  /** While waiting, check that the owner is still alive this often, ms. Default 100. */
  ownerCheckMs?: number;
  /** Give up with LOCK_TIMEOUT after this long, ms (the owner is alive but never releases). Default 30 s. */
  timeoutMs?: number;
  /** What the lock protects, for messages. */
  what?: string;
}

/**
 * The pool lock, owned by a pid: the lock word holds 0 when free and the owner's pid when held, so
 * a waiter can tell *who* holds it and check with kill(pid, 0) (see liveness.ts) whether that
 * process still exists. A waiter that finds the owner dead throws LOCK_OWNER_DEAD after calling
 * `onOwnerDead` (the segment marks itself broken): the protected data may be half-updated, so
 * nothing is "recovered" silently.
 *
 * Two implementations, as in LAM:
 *  - 'spin' (usysv): CAS in a loop for spinNs, then yield to the event loop (setImmediate) and try
 *    again. Best when processes <= cores.
 *  - 'block' (sysv): after the spin, register in the waiter count and sleep on the lock word with
 *    a futex (helper thread, the event loop keeps running); release wakes one sleeper when the
 *    count is non-zero. Best when processes > cores.
 *
 * Memory ordering: acquire is a successful Atomics.compareExchange(0 -> pid) and release is
 * Atomics.compareExchange(pid -> 0); both are sequentially consistent read-modify-writes, so every
 * access made while holding the lock happens-before the next owner's accesses. The sleeper
 * protocol is Dekker-style on (lock word, waiter count): the sleeper increments the count *then*
 * FUTEX_WAITs on the owner value it saw (the kernel re-checks it atomically); the releaser stores 0
 * *then* reads the count. With sequentially consistent operations one of the two sees the other,
 * so a release is never missed (at worst a wake-up is spurious, and the waiter re-checks).
 */
export class PoolLock {
  private readonly lockIndex: number;
  private readonly waitersIndex: number;
  private readonly spinNs: number;
  private readonly ownerCheckMs: number;
  private readonly timeoutMs: number;
  private readonly what: string;

  constructor(
    private readonly mem: FutexMemory,
    private readonly lockOffset: number,
    waitersOffset: number,
    readonly kind: 'spin' | 'block',
    opts: LockOptions = {},
    private readonly onOwnerDead?: (pid: number) => void,
  ) {
    if (lockOffset % 4 !== 0 || waitersOffset % 4 !== 0) {
      throw new ShmError('BAD_ARGS', 'lock words must be 4-byte aligned');
    }
    this.lockIndex = lockOffset >> 2;
    this.waitersIndex = waitersOffset >> 2;
    this.spinNs = opts.spinNs ?? 20_000;
    this.ownerCheckMs = opts.ownerCheckMs ?? 100;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.what = opts.what ?? 'the pool lock';
  }

  /** The pid holding the lock, 0 when free. */
  owner(): number {
    return Atomics.load(this.mem.i32, this.lockIndex);
  }

  /** Take the lock if it is free now. */
  tryAcquire(): boolean {
    return Atomics.compareExchange(this.mem.i32, this.lockIndex, 0, process.pid) === 0;
  }

  /** Take the lock, waiting as the kind says; throws LOCK_OWNER_DEAD / LOCK_TIMEOUT. */
  async acquire(): Promise<void> {
    if (this.tryAcquire()) return;
    await this.contend(false);
  }

  /**
   * Run `fn` holding the lock, synchronously: the lock is never held across an `await` (a holder
   * that yields to the event loop would make every spinning peer wait for its whole microtask
   * queue, or for ever if that queue waits for the lock). Waiting happens with the lock free.
   */
  async run<T>(fn: () => T): Promise<T> {
    for (;;) {
      if (this.tryAcquire()) {
        try {
          return fn();
        } finally {
          this.release();
        }
      }
      await this.contend(true);
    }
  }

  /** Wait until we took the lock (waitOnly false) or until it looks free (waitOnly true). */
  private async contend(waitOnly: boolean): Promise<void> {
    const got = () =>
      waitOnly ? Atomics.load(this.mem.i32, this.lockIndex) === 0 : this.tryAcquire();
    const start = Date.now();
    let lastCheck = start;
    for (;;) {
      // spin phase (synchronous, bounded)
      if (this.spinNs > 0) {
        const end = process.hrtime.bigint() + BigInt(this.spinNs);
        for (let n = 1; ; n++) {
          if (Atomics.load(this.mem.i32, this.lockIndex) === 0 && got()) return;
          if ((n & 15) === 0 && process.hrtime.bigint() >= end) break;
        }
      }
      const owner = Atomics.load(this.mem.i32, this.lockIndex);
      if (owner === 0) {
        if (got()) return;
        continue;
      }
      if (this.kind === 'block') {
        Atomics.add(this.mem.i32, this.waitersIndex, 1);
        try {
          await waitWord(this.mem, this.lockOffset, owner, {
            timeoutMs: Math.max(1, this.ownerCheckMs - (Date.now() - lastCheck)),
          });
        } finally {
          if (this.mem.i32.length > 0) Atomics.sub(this.mem.i32, this.waitersIndex, 1);
        }
      } else {
        await new Promise((res) => setImmediate(res));
      }
      if (this.mem.i32.length === 0) {
        throw new ShmError('CLOSED', `${this.what}: the segment was closed while waiting`);
      }
      if (got()) return;
      const now = Date.now();
      if (now - lastCheck >= this.ownerCheckMs) {
        lastCheck = now;
        const holder = Atomics.load(this.mem.i32, this.lockIndex);
        if (holder !== 0 && !isProcessAlive(holder)) {
          this.onOwnerDead?.(holder);
          throw new ShmError(
            'LOCK_OWNER_DEAD',
            `${this.what} is held by pid ${holder}, which no longer exists (it died holding it); ` +
              'the shared state it protects may be inconsistent, so the segment is marked broken: ' +
              'end the job (every process of it), run lamclean / ssi-shm-clean, and start again',
          );
        }
        if (now - start >= this.timeoutMs) {
          throw new ShmError(
            'LOCK_TIMEOUT',
            `${this.what} has been held by live pid ${holder} for over ${this.timeoutMs} ms; ` +
              'that process is stuck (stopped, or blocked while holding it): inspect it or end the job',
          );
        }
      }
    }
  }

  /** Release a lock we hold (throws BAD_ARGS when we do not hold it). */
  release(): void {
    const prev = Atomics.compareExchange(this.mem.i32, this.lockIndex, process.pid, 0);
    if (prev !== process.pid) {
      throw new ShmError(
        'BAD_ARGS',
        `${this.what}: release by pid ${process.pid}, but the holder is ${prev === 0 ? 'nobody' : `pid ${prev}`}`,
      );
    }
    if (this.kind === 'block' && Atomics.load(this.mem.i32, this.waitersIndex) > 0) {
      wakeWord(this.mem, this.lockOffset, 1);
    }
  }
}
