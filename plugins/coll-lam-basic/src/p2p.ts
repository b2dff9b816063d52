/** Anything that completes like an MPI request. */
export interface Waitable {
  wait(): Promise<unknown>;
}

/** Completes every request (`MPI_Waitall` without statuses). */
export async function waitAll(requests: readonly Waitable[]): Promise<void> {
  await Promise.all(requests.map((r) => r.wait()));
}

/**
 * Every rank but `rank`, starting after it and wrapping around: when every process walks its
 * peers in this order, no single process is everybody's first partner.
 */
export function peersOf(rank: number, size: number): number[] {
  const peers: number[] = [];
  for (let i = 1; i < size; i++) peers.push((rank + i) % size);
  return peers;
}

/** The ranks 0..count-1. */
export function ranksUpTo(count: number): number[] {
  return Array.from({ length: count }, (_, i) => i);
}
