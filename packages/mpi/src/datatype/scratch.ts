/**
 * Staging memory for derived-type messages, reused: a fresh multi-megabyte buffer per message
 * costs more in page faults than the packing itself (a 1 Mi-double column took twice as long as
 * packing by hand into a reused array). Buffers come in power-of-two sizes from 4 KiB; a few per
 * size are kept, and at most `MAX_KEPT_BYTES` in all.
 */
const MIN_BYTES = 4096;
const PER_SIZE = 4;
const MAX_KEPT_BYTES = 64 * 1024 * 1024;

const free = new Map<number, Buffer[]>();
let kept = 0;

function sizeClass(n: number): number {
  let c = MIN_BYTES;
  while (c < n) c *= 2;
  return c;
}

/** `n` bytes of staging memory (its own ArrayBuffer at offset 0, so any element type aligns). */
export function takeScratch(n: number): Uint8Array {
  const c = sizeClass(n);
  const list = free.get(c);
  const buf = list?.pop();
  if (buf) {
    kept -= c;
    return buf.subarray(0, n);
  }
  return Buffer.allocUnsafeSlow(c).subarray(0, n);
}

/** Gives back memory from `takeScratch` once nothing refers to it any more. */
export function returnScratch(bytes: Uint8Array): void {
  const c = bytes.buffer.byteLength;
  if (c < MIN_BYTES || (c & (c - 1)) !== 0 || kept + c > MAX_KEPT_BYTES) return;
  let list = free.get(c);
  if (!list) {
    list = [];
    free.set(c, list);
  }
  if (list.length >= PER_SIZE) return;
  list.push(Buffer.from(bytes.buffer, 0, c));
  kept += c;
}
