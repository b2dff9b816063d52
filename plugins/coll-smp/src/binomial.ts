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
