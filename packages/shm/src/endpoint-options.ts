import { ShmError } from './errors';
import type { LockOptions } from './lock';
import type { ShmSegment } from './segment';

export interface EndpointOptions {
  /**
   * Spin synchronously on the main thread for up to this many microseconds, polling our doorbell,
   * before sleeping in an async futex wait. Spinning answers in well under a microsecond but holds
   * the event loop for that long at most. Default: 50 on a 'spin'-lock segment, 0 on a 'block' one.
   */
  spinUs?: number;
  /** The helper thread spins this long before FUTEX_WAIT, µs. Default 0. */
  helperSpinUs?: number;
  /** Largest piece of a large message placed in the pool at once, bytes. Default 256 KiB. */
  chunkSize?: number;
  /** While waiting, check that peers are alive this often, ms. Default 500. */
  peerCheckMs?: number;
  /** Options of the pool lock (its kind comes from the segment). */
  lock?: LockOptions;
  /**
   * Where a large message goes when its first chunk arrives and no posted receive with `into`
   * takes it: return a buffer of at least `length` bytes (the message is then copied once, from
   * the pool into it, and its `data` is a view of it) or undefined for a new buffer. Called
   * synchronously while the endpoint drains its postboxes, in per-sender order; it must not call
   * the endpoint. For a protocol layer that knows which of its buffers the next large message of
   * a sender fills (the sm rpi's rendezvous bodies).
   */
  intoFor?: (from: number, length: number) => Uint8Array | undefined;
}

export interface RecvOptions {
  /** Reject with TIMEOUT after this many ms. Default: no timeout. */
  timeoutMs?: number;
  /**
   * Receive into this buffer when the message fits (the result's `data` is then a view of it):
   * saves allocating (and page-faulting) a fresh buffer for every large message. A message that
   * does not fit, or that had already arrived before recv() was called, comes in a new buffer.
   */
  into?: Uint8Array;
}

/** The endpoint's options with their defaults applied, checked, in the units the code uses. */
export interface EndpointSettings {
  spinNs: bigint;
  helperSpinNs: number;
  /** `chunkSize`, clamped to at least one pool block and at most the pool. */
  chunkSize: number;
  peerCheckMs: number;
}

/** Apply the defaults to `opts` (some depend on the segment) and refuse values out of range. */
export function endpointSettings(segment: ShmSegment, opts: EndpointOptions): EndpointSettings {
  const l = segment.layout;
  const spinUs = opts.spinUs ?? (segment.lockKind === 'spin' ? 50 : 0);
  const helperSpinUs = opts.helperSpinUs ?? 0;
  if (!(spinUs >= 0 && spinUs <= 1e6) || !(helperSpinUs >= 0 && helperSpinUs <= 1e6)) {
    throw new ShmError('BAD_ARGS', 'spinUs and helperSpinUs must be from 0 to 1e6 microseconds');
  }
  const chunk = opts.chunkSize ?? 256 * 1024;
  if (!Number.isInteger(chunk) || chunk < 1) {
    throw new ShmError('BAD_ARGS', `chunkSize must be a positive integer, got ${chunk}`);
  }
  return {
    spinNs: BigInt(Math.round(spinUs * 1000)),
    helperSpinNs: Math.round(helperSpinUs * 1000),
    chunkSize: Math.max(l.poolBlock, Math.min(chunk, l.poolSize)),
    peerCheckMs: opts.peerCheckMs ?? 500,
  };
}
