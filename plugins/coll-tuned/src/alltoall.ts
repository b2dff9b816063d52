import type { CollComm, CollRequest } from '@ssi/mpi';
import { blockOf } from './buffers';
import { Tag } from './tags';

/**
 * Pairwise exchange: in step k rank r sends its block for r + k and receives the block of
 * r - k, one pair at a time. n - 1 steps; each process has one message in each direction in
 * flight, so large blocks do not compete for the links (and memory) all at once. In place
 * (`send === null`) the blocks to send are read from a copy. The own block is copied while the
 * first exchange travels (before it, the copy delayed every step: 1 MiB blocks on 2 ranks took
 * 0.70-1.21 ms against lam_basic's 0.43-1.14).
 */
export async function alltoallPairwise(
  comm: CollComm,
  send: Uint8Array | null,
  recv: Uint8Array,
): Promise<void> {
  const c = comm.coll;
  const n = c.size;
  const src = send ?? recv.slice();
  for (let k = 1; k < n; k++) {
    const to = (c.rank + k) % n;
    const from = (c.rank - k + n) % n;
    const exchange = c.sendrecv(
      blockOf(src, to, n),
      to,
      Tag.ALLTOALL,
      blockOf(recv, from, n),
      from,
      Tag.ALLTOALL,
    );
    if (k === 1) blockOf(recv, c.rank, n).set(blockOf(src, c.rank, n));
    await exchange;
  }
  if (n === 1) blockOf(recv, 0, 1).set(blockOf(src, 0, 1));
}

/**
 * Everything at once: every receive is posted, then every send, then all are awaited. n - 1
 * messages in flight per process: the fewest latencies, the best for small blocks. Receives are
 * posted from rank + 1 on, as lam_basic's (posted from rank - 1 on, 8 B on 4 ranks measured
 * 1.17-1.24x lam_basic's time in two runs; in this order 0.82x in one).
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
    const from = (c.rank + k) % n;
    requests.push(c.irecv(blockOf(recv, from, n), from, Tag.ALLTOALL));
  }
  for (let k = 1; k < n; k++) {
    const to = (c.rank + k) % n;
    requests.push(c.isend(blockOf(src, to, n), to, Tag.ALLTOALL));
  }
  blockOf(recv, c.rank, n).set(blockOf(src, c.rank, n));
  await Promise.all(requests.map((r) => r.wait()));
}

/**
 * Bruck's alltoall for small blocks: rank r rotates its blocks so that slot i holds the block
 * for r + i; in round k it sends every slot with bit k set, packed in one message, to r + 2^k
 * and puts what arrives from r - 2^k into the same slots. After ceil(log2 n) rounds slot i holds
 * the block from r - i. log2 n messages per process instead of n - 1, each of about n/2 blocks,
 * plus the packing copies: for small blocks on many processes.
 */
export async function alltoallBruck(
  comm: CollComm,
  send: Uint8Array | null,
  recv: Uint8Array,
): Promise<void> {
  const c = comm.coll;
  const n = c.size;
  const r = c.rank;
  const block = recv.length / n;
  const src = send ?? recv;
  // Slot i: the block for r + i (read before `recv` is written: in place works).
  const slots = new Uint8Array(recv.length);
  slots.set(src.subarray(r * block), 0);
  slots.set(src.subarray(0, r * block), (n - r) * block);
  const out = new Uint8Array(Math.ceil(n / 2) * block);
  const into = new Uint8Array(out.length);
  for (let k = 1; k < n; k *= 2) {
    const moving: number[] = [];
    for (let i = k; i < n; i++) if (i & k) moving.push(i);
    for (const [j, i] of moving.entries()) out.set(blockOf(slots, i, n), j * block);
    const bytes = moving.length * block;
    await c.sendrecv(
      out.subarray(0, bytes),
      (r + k) % n,
      Tag.ALLTOALL,
      into.subarray(0, bytes),
      (r - k + n) % n,
      Tag.ALLTOALL,
    );
    for (const [j, i] of moving.entries()) {
      blockOf(slots, i, n).set(into.subarray(j * block, (j + 1) * block));
    }
  }
  // Slot i: the block from r - i.
  for (let i = 0; i < n; i++) blockOf(recv, (r - i + n) % n, n).set(blockOf(slots, i, n));
}
