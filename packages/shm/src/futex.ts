import { ShmError } from './errors';
import { type NativeHandle, type NativeWaiter, native, type WaitResult } from './native';

export type { WaitResult } from './native';

/** The memory a futex word lives in: a segment (its native handle and an Int32Array over it). */
export interface FutexMemory {
  readonly handle: NativeHandle;
  readonly i32: Int32Array;
}

export interface WaitOptions {
  /** Give up after this many milliseconds ('timed-out'); negative = never. Default -1. */
  timeoutMs?: number;
  /**
   * Spin synchronously on the main thread, polling the word, for up to this many nanoseconds
   * before going to the helper thread. Blocks the event loop for that long at most: use it only
   * for latency-critical waits (spin mode). Default 0.
   */
  syncSpinNs?: number;
  /** The helper thread spins this long before FUTEX_WAIT. Default 0. */
  helperSpinNs?: number;
}

const idle: NativeWaiter[] = [];

/**
 * Wait until the 32-bit word at `byteOffset` is woken or no longer holds `expected`, without
 * blocking the event loop: a helper thread (from a small pool) spins for `helperSpinNs` and then
 * sleeps in FUTEX_WAIT on the shared mapping; the result comes back through a thread-safe
 * function. Resolves 'ok' (woken or changed), 'not-equal' (it did not hold `expected` to begin
 * with), 'timed-out', or 'cancelled' (the process is shutting down).
 *
 * Spurious 'ok' is possible (like every futex wait): callers re-check their condition.
 */
export async function waitWord(
  mem: FutexMemory,
  byteOffset: number,
  expected: number,
  opts: WaitOptions = {},
): Promise<WaitResult> {
  const index = wordIndex(mem, byteOffset);
  const syncSpinNs = opts.syncSpinNs ?? 0;
  if (Atomics.load(mem.i32, index) !== (expected | 0)) return 'not-equal';
  if (syncSpinNs > 0) {
    const end = process.hrtime.bigint() + BigInt(Math.floor(syncSpinNs));
    for (let n = 1; ; n++) {
      if (Atomics.load(mem.i32, index) !== (expected | 0)) return 'ok';
      if ((n & 31) === 0 && process.hrtime.bigint() >= end) break;
    }
  }
  const waiter = idle.pop() ?? new (native().Waiter)();
  try {
    return await waiter.wait(
      mem.handle,
      byteOffset,
      expected >>> 0,
      opts.timeoutMs ?? -1,
      opts.helperSpinNs ?? 0,
    );
  } finally {
    if (idle.length < 8) idle.push(waiter);
    else waiter.close();
  }
}

/** The same wait, blocking the calling thread (for worker threads and tools, not the main loop). */
export function waitWordSync(
  mem: FutexMemory,
  byteOffset: number,
  expected: number,
  timeoutMs = -1,
  spinNs = 0,
): WaitResult {
  wordIndex(mem, byteOffset);
  return native().waitSync(mem.handle, byteOffset, expected >>> 0, timeoutMs, spinNs);
}

/** Wake up to `count` waiters (in any process) sleeping on the word; 0 = all. Returns how many. */
export function wakeWord(mem: FutexMemory, byteOffset: number, count = 0): number {
  wordIndex(mem, byteOffset);
  return native().wake(mem.handle, byteOffset, count);
}

function wordIndex(mem: FutexMemory, byteOffset: number): number {
  if (!Number.isInteger(byteOffset) || byteOffset % 4 !== 0 || byteOffset < 0) {
    throw new ShmError(
      'BAD_ARGS',
      `a futex word offset must be a multiple of 4, got ${byteOffset}`,
    );
  }
  if (byteOffset + 4 > mem.i32.byteLength) {
    throw new ShmError(
      'BAD_ARGS',
      `futex word offset ${byteOffset} is outside the segment (${mem.i32.byteLength} bytes; 0 = closed)`,
    );
  }
  return byteOffset >> 2;
}
