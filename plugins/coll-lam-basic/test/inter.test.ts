/** The intercommunicator collectives, between groups of every shape from 1x1 to 5x4. */
import { PROC_NULL, ROOT } from '@ssi/mpi';
import { onEveryInterProcess, type Side } from '@ssi/mpi/testing';
import { describe, expect, it } from 'vitest';
import { inter } from './helpers/algorithms';
import { blockOf, concat, MATMUL, matricesOf, productOfRanks } from './helpers/data';

const SHAPES: [number, number][] = [
  [1, 1],
  [1, 3],
  [3, 1],
  [2, 2],
  [3, 2],
  [4, 5],
  [5, 4],
];

/** Global numbering used to tell the groups' data apart: A's ranks, then B's. */
function globalRank(side: Side, rank: number, sizeA: number): number {
  return side === 'A' ? rank : sizeA + rank;
}

for (const [sizeA, sizeB] of SHAPES) {
  describe(`intercommunicator of ${sizeA} and ${sizeB} processes`, () => {
    const sizeOf = (side: Side) => (side === 'A' ? sizeA : sizeB);
    const remoteOf = (side: Side): Side => (side === 'A' ? 'B' : 'A');

    it('barrierInter lets nobody out before everybody of both groups is in, twice', async () => {
      let entered = 0;
      await onEveryInterProcess(sizeA, sizeB, async (comm, side, rank) => {
        for (let round = 1; round <= 2; round++) {
          await new Promise((r) => setTimeout(r, (rank * 5 + round + (side === 'A' ? 0 : 2)) % 4));
          entered++;
          await inter.barrierInter(comm);
          expect(entered).toBeGreaterThanOrEqual(round * (sizeA + sizeB));
        }
      });
    });

    it('bcastInter reaches the whole remote group from any root of either group', async () => {
      for (const rootSide of ['A', 'B'] as Side[]) {
        for (let root = 0; root < sizeOf(rootSide); root++) {
          const want = blockOf(globalRank(rootSide, root, sizeA), 300, 1);
          await onEveryInterProcess(sizeA, sizeB, async (comm, side, rank) => {
            if (side === rootSide) {
              const isRoot = rank === root;
              const buf = isRoot ? want.slice() : new Uint8Array(300);
              await inter.bcastInter(comm, buf, isRoot ? ROOT : PROC_NULL);
              expect(buf).toEqual(isRoot ? want : new Uint8Array(300));
              return;
            }
            const buf = new Uint8Array(300);
            await inter.bcastInter(comm, buf, root);
            expect(buf).toEqual(want);
          });
        }
      }
    });

    it('allreduceInter gives each process the remote group product in rank order', async () => {
      // The groups' operands differ: B's are those of global ranks sizeA...
      const productOf = (side: Side) => {
        const from = globalRank(side, 0, sizeA);
        return productOfRanks(from, from + sizeOf(side), 2);
      };
      await onEveryInterProcess(sizeA, sizeB, async (comm, side, rank) => {
        const recv = new Float64Array(8);
        await inter.allreduceInter(
          comm,
          matricesOf(globalRank(side, rank, sizeA), 2),
          recv,
          MATMUL,
        );
        expect(Array.from(recv)).toEqual(productOf(remoteOf(side)));
      });
    });

    it('allgatherInter gives each process the remote blocks in rank order (sizes differ)', async () => {
      const blockLength = (side: Side) => (side === 'A' ? 3 : 5);
      const blocksOf = (side: Side) =>
        concat(
          Array.from({ length: sizeOf(side) }, (_, r) =>
            blockOf(globalRank(side, r, sizeA), blockLength(side), 2),
          ),
        );
      await onEveryInterProcess(sizeA, sizeB, async (comm, side, rank) => {
        const remote = remoteOf(side);
        const recv = new Uint8Array(sizeOf(remote) * blockLength(remote));
        const mine = blockOf(globalRank(side, rank, sizeA), blockLength(side), 2);
        await inter.allgatherInter(comm, mine, recv);
        expect(recv).toEqual(blocksOf(remote));
      });
    });
  });
}
