/**
 * Binomial trees (LAM's logarithmic algorithms), over positions 0..size-1 rooted at position 0.
 * Position p's parent is p with its lowest set bit cleared; its children are p + 2^k for each
 * 2^k below p's lowest set bit (for the root: each 2^k below size) that is still < size. The
 * subtree of p is therefore the contiguous range [p, subtreeEnd(p, size)), and p's children, in
 * ascending order, cover consecutive ranges after p: reductions combine contiguous rank ranges in
 * order, lower range first.
 *
 * A collective with root r maps rank to position by rotation ((rank - r) mod size), or, where
 * rank order matters, runs a tree over a contiguous range of ranks (position = rank - lo).
 */

/** The lowest set bit of p (0 for 0). */
function lowestBit(p: number): number {
  return p & -p;
}

/** Smallest power of two >= n (1 for n <= 1). */
function ceilPow2(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/** Position of p's parent, or -1 for the root. */
export function treeParent(p: number): number {
  return p === 0 ? -1 : p - lowestBit(p);
}

/** Positions of p's children, ascending (smallest subtree first). */
export function treeChildren(p: number, size: number): number[] {
  const limit = p === 0 ? ceilPow2(size) : lowestBit(p);
  const children: number[] = [];
  for (let step = 1; step < limit && p + step < size; step *= 2) children.push(p + step);
  return children;
}

/** One past the last position of p's subtree. */
export function subtreeEnd(p: number, size: number): number {
  const span = p === 0 ? ceilPow2(size) : lowestBit(p);
  return Math.min(size, p + span);
}

/** A rank's position in the tree rooted at `root`. */
export function positionOf(rank: number, root: number, size: number): number {
  return (rank - root + size) % size;
}

/** The rank at a position of the tree rooted at `root`. */
export function rankAt(position: number, root: number, size: number): number {
  return (position + root) % size;
}
