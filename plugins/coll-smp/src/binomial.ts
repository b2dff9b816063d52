/**
 * `rank`'s place in the binomial tree over `size` ranks rooted at `root`: its parent (-1 at the
 * root) and its children, the smallest subtree first (a reduction combines them in that order;
 * a broadcast sends to them the other way round, so that the deepest branch starts earliest).
 */
export function binomialTree(
  rank: number,
  root: number,
  size: number,
): { parent: number; children: number[] } {
  const vr = (rank - root + size) % size;
  const children: number[] = [];
  let parent = -1;
  for (let mask = 1; mask < size; mask <<= 1) {
    if (vr & mask) {
      parent = (vr - mask + root) % size;
      break;
    }
    if (vr + mask < size) children.push((vr + mask + root) % size);
  }
  return { parent, children };
}

/**
 * `rank`'s place in smp's reduce tree over `size` ranks, rooted at 0: the binomial tree whose
 * child past the largest power of two (if any) comes first. Combining a rank's own operand with
 * its children in that order associates the operands exactly as recursive doubling does (the
 * ranks past the power of two folded in first, then blocks doubling), so a reduce and an allreduce
 * of the same operands give the same bits.
 */
export function reduceTreeAtZero(
  rank: number,
  size: number,
): { parent: number; children: number[] } {
  const { parent, children } = binomialTree(rank, 0, size);
  let pof2 = 1;
  while (pof2 * 2 <= size) pof2 *= 2;
  const extra = children.filter((c) => c >= pof2);
  return { parent, children: [...extra, ...children.filter((c) => c < pof2)] };
}
