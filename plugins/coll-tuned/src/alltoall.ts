import type { CollComm, CollRequest } from '@ssi/mpi';
import { blockOf } from './buffers';
import { Tag } from './tags';

/**
 * Pairwise exchange: in step k rank r sends its block for r + k and receives the block of
 * r - k, one pair at a time. n - 1 steps; each process has one message in each direction in
 * flight, so large blocks do not compete for the links (and memory) all at once. In place
 * (`send === null`) the blocks to send are read from a copy.
 */
export async function alltoallPairwise(
  comm: CollComm,
  send: Uint8Array | null,
  recv: Uint8Array,
): Promise<void> {
  const c = comm.coll;
  const n = c.size;
  const src = send ?? recv.slice();
  blockOf(recv, c.rank, n).set(blockOf(src, c.rank, n));
  for (let k = 1; k < n; k++) {
    const to = (c.rank + k) % n;
    const from = (c.rank - k + n) % n;
    await c.sendrecv(
      blockOf(src, to, n),
      to,
      Tag.ALLTOALL,
      blockOf(recv, from, n),
      from,
      Tag.ALLTOALL,
    );
  }
}

/**
 * Everything at once: every receive is posted, then every send, then all are awaited. n - 1
 * messages in flight per process: the fewest latencies, the best for small blocks.
 */
export async function alltoallLinear(
  comm: CollComm,
  send: Uint8Array | null,
  recv: Uint8Array,
): Promise<void> {
  const c = comm.coll;
  const n = c.size;
  const src = send ?? recv.slice();
  const requests: CollRequest[] = [];
  for (let k = 1; k < n; k++) {
    const from = (c.rank - k + n) % n;
    requests.push(c.irecv(blockOf(recv, from, n), from, Tag.ALLTOALL));
  }
  for (let k = 1; k < n; k++) {
    const to = (c.rank + k) % n;
    requests.push(c.isend(blockOf(src, to, n), to, Tag.ALLTOALL));
  }
  blockOf(recv, c.rank, n).set(blockOf(src, c.rank, n));
  await Promise.all(requests.map((r) => r.wait()));
}
