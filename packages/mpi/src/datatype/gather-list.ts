import type { BufferLike } from '../data';
import type { RpiGather } from '../rpi/types';
import type { Datatype } from './datatype';

/**
 * The gather path of a non-contiguous send (issue 20): views of the user's buffer, one per byte
 * range of `count` instances of `type`, in type-map order (the order `packInto` copies them, so
 * the bytes on the wire are the packed form either way). Null when the rpi's thresholds say that
 * packing is cheaper: a short message, or ranges too short on average for a separate write.
 */
export function gatherList(
  buf: BufferLike,
  type: Datatype,
  count: number,
  offer: RpiGather,
): Uint8Array[] | null {
  const { segDisp, segLen } = type.map;
  const total = count * type.size;
  const ranges = count * segDisp.length;
  if (ranges === 0 || total < offer.minBytes || total < offer.minSegmentBytes * ranges) {
    return null;
  }
  const list: Uint8Array[] = [];
  const memory = buf.buffer;
  let prevEnd = -1;
  for (let j = 0; j < count; j++) {
    const base = buf.byteOffset + j * type.extent;
    for (let s = 0; s < segDisp.length; s++) {
      const at = base + segDisp[s]!;
      const len = segLen[s]!;
      if (at === prevEnd) {
        // The range continues the previous one (an instance ends where the next begins).
        const last = list[list.length - 1]!;
        list[list.length - 1] = new Uint8Array(memory, last.byteOffset, last.byteLength + len);
      } else list.push(new Uint8Array(memory, at, len));
      prevEnd = at + len;
    }
  }
  return list;
}
