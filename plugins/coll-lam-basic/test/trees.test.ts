import { describe, expect, it } from 'vitest';
import { positionOf, rankAt, subtreeEnd, treeChildren, treeParent } from '../src/trees';

const SIZES = Array.from({ length: 17 }, (_, i) => i + 1);

/** The tree as rank -> children ranks, for a root. */
function childrenByRank(size: number, root: number): number[][] {
  return Array.from({ length: size }, (_, rank) =>
    treeChildren(positionOf(rank, root, size), size).map((p) => rankAt(p, root, size)),
  );
}

describe('binomial trees', () => {
  it('match the textbook tree of 8 processes rooted at 0', () => {
    expect(childrenByRank(8, 0)).toEqual([[1, 2, 4], [], [3], [], [5, 6], [], [7], []]);
    expect([0, 1, 2, 3, 4, 5, 6, 7].map(treeParent)).toEqual([-1, 0, 0, 2, 0, 4, 4, 6]);
  });

  it('cut the tree at the size and rotate it to the root (6 processes rooted at 4)', () => {
    // positions 0..5 are ranks 4, 5, 0, 1, 2, 3; position children: 0 -> 1, 2, 4; 2 -> 3; 4 -> 5
    expect(childrenByRank(6, 4)).toEqual([[1], [], [3], [], [5, 0, 2], []]);
  });

  for (const size of SIZES) {
    it(`span ${size} processes from every root, each once, in at most ceil(log2) levels`, () => {
      const depthLimit = Math.ceil(Math.log2(size));
      for (let root = 0; root < size; root++) {
        const children = childrenByRank(size, root);
        const parents = new Map<number, number>();
        children.forEach((kids, parent) => {
          for (const k of kids) {
            expect(parents.has(k)).toBe(false);
            parents.set(k, parent);
          }
        });
        expect(parents.has(root)).toBe(false);
        expect(parents.size).toBe(size - 1);
        for (let rank = 0; rank < size; rank++) {
          const parentPos = treeParent(positionOf(rank, root, size));
          expect(parentPos < 0 ? -1 : rankAt(parentPos, root, size)).toBe(parents.get(rank) ?? -1);
          let depth = 0;
          for (let r = rank; r !== root; r = parents.get(r)!) depth++;
          expect(depth).toBeLessThanOrEqual(depthLimit);
        }
      }
    });

    it(`give contiguous subtrees whose children cover consecutive ranges (size ${size})`, () => {
      for (let p = 0; p < size; p++) {
        let next = p + 1;
        for (const child of treeChildren(p, size)) {
          expect(child).toBe(next);
          next = subtreeEnd(child, size);
        }
        expect(next).toBe(subtreeEnd(p, size));
        const members = [p];
        for (let i = 0; i < members.length; i++) members.push(...treeChildren(members[i]!, size));
        members.sort((x, y) => x - y);
        expect(members).toEqual(Array.from({ length: subtreeEnd(p, size) - p }, (_, i) => p + i));
      }
    });
  }
});
