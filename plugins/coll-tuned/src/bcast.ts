import type { CollComm, CollRequest } from '@ssi/mpi';
import { Tag } from './tags';

/** Position relative to the root, and back. */
const rel = (rank: number, root: number, n: number) => (rank - root + n) % n;
const abs = (pos: number, root: number, n: number) => (pos + root) % n;

/** The lowest set bit of `pos` (its subtree size in a binomial tree); n for the root. */
function subtreeOf(pos: number, n: number): number {
  if (pos === 0) {
    let m = 1;
    while (m < n) m *= 2;
    return m;
  }
  return pos & -pos;
}

/**
 * Binomial broadcast: position p receives from p minus its lowest set bit, then sends to
 * p + m for every smaller power of two m, largest subtree first. ceil(log2 n) latencies.
 */
export async function bcastBinomial(comm: CollComm, buf: Uint8Array, root: number): Promise<void> {
  const c = comm.coll;
  const n = c.size;
  if (n === 1) return;
  const pos = rel(c.rank, root, n);
  const sub = subtreeOf(pos, n);
  if (pos !== 0) await c.recv(buf, abs(pos - sub, root, n), Tag.BCAST);
  let m = sub / 2;
  while (m >= 1 && pos + m >= n) m /= 2;
  if (m < 1) return; // a leaf
  if (m < 2) {
    // One child (every sender at np 2, the last level elsewhere): a blocking send, whose fast
    // path completes at once, instead of a request, its wait and a Promise.all.
    await c.send(buf, abs(pos + m, root, n), Tag.BCAST);
    return;
  }
  const sends: CollRequest[] = [];
  for (; m >= 1; m /= 2) {
    if (pos + m < n) sends.push(c.isend(buf, abs(pos + m, root, n), Tag.BCAST));
  }
  await Promise.all(sends.map((s) => s.wait()));
}

/**
 * Scatter-allgather broadcast (van de Geijn) for large buffers: the buffer is cut into n chunks
 * (by position from the root); a binomial scatter gives every position its chunk, each subtree
 * receiving only its own chunks, then a ring allgather completes everybody's copy. About 2 times
 * the buffer crosses each link instead of log2(n) times.
 */
export async function bcastScatterAllgather(
  comm: CollComm,
  buf: Uint8Array,
  root: number,
): Promise<void> {
  const c = comm.coll;
  const n = c.size;
  if (n === 1 || buf.length === 0) return;
  const chunk = Math.ceil(buf.length / n);
  // Bytes of positions [a, b): empty past the end of the buffer.
  const span = (a: number, b: number) =>
    buf.subarray(Math.min(a * chunk, buf.length), Math.min(b * chunk, buf.length));
  const pos = rel(c.rank, root, n);
  const sub = subtreeOf(pos, n);
  if (pos !== 0) {
    await c.recv(span(pos, pos + sub), abs(pos - sub, root, n), Tag.BCAST_SCATTER);
  }
  const sends: CollRequest[] = [];
  for (let m = sub / 2; m >= 1; m /= 2) {
    const child = pos + m;
    if (child < n) {
      sends.push(c.isend(span(child, child + m), abs(child, root, n), Tag.BCAST_SCATTER));
    }
  }
  await Promise.all(sends.map((s) => s.wait()));
  const right = abs((pos + 1) % n, root, n);
  const left = abs((pos - 1 + n) % n, root, n);
  for (let s = 0; s < n - 1; s++) {
    const out = (pos - s + n) % n;
    const into = (pos - s - 1 + n) % n;
    await c.sendrecv(
      span(out, out + 1),
      right,
      Tag.BCAST_ALLGATHER,
      span(into, into + 1),
      left,
      Tag.BCAST_ALLGATHER,
    );
  }
}

/**
 * Pipelined chain broadcast: the buffer travels down the chain root, root + 1, ... in segments;
 * every process forwards segment i while segment i + 1 arrives, so for a long buffer the time is
 * close to one transfer of it plus n - 1 segment latencies. All receives are posted at once.
 */
export function makeBcastChain(segment: number) {
  return async function bcastChain(comm: CollComm, buf: Uint8Array, root: number): Promise<void> {
    const c = comm.coll;
    const n = c.size;
    if (n === 1 || buf.length === 0) return;
    const pos = rel(c.rank, root, n);
    const prev = abs(pos - 1, root, n);
    const next = pos + 1 < n ? abs(pos + 1, root, n) : -1;
    const segments: Uint8Array[] = [];
    for (let at = 0; at < buf.length; at += segment) {
      segments.push(buf.subarray(at, Math.min(at + segment, buf.length)));
    }
    const arrivals = pos === 0 ? [] : segments.map((s) => c.irecv(s, prev, Tag.BCAST));
    const sends: CollRequest[] = [];
    for (let i = 0; i < segments.length; i++) {
      if (pos !== 0) await arrivals[i]!.wait();
      if (next >= 0) sends.push(c.isend(segments[i]!, next, Tag.BCAST));
    }
    await Promise.all(sends.map((s) => s.wait()));
  };
}
