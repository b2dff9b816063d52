import type { LamClient, UniverseNode } from '@ssi/lam';
import { LamError } from '@ssi/lam';
import { describe, expect, it } from 'vitest';
import type { JobPart } from '../src/mpirun/args';
import type { Placement } from '../src/mpirun/placement';
import { placeAgain, whyNotRecovered } from '../src/mpirun/recovery';

/**
 * The decisions of automatic recovery without processes: which failures are recovered, and where
 * the restarted ranks go. The real recoveries (test hosts, a rank and a host killed) are in
 * plugins/cr-self/test/recovery.test.ts.
 */
const node = (id: number): UniverseNode =>
  ({
    id,
    name: `h${id}`,
    address: `127.0.0.${id + 2}`,
    port: 1,
    cpus: 1,
    origin: id === 0,
    pid: 100 + id,
  }) as UniverseNode;
const part: JobPart = { where: [], exports: [], argv: ['app.js'] };

/** A client whose lamds on `dead` nodes do not answer (the lamd of a lost node). */
function client(universe: UniverseNode[], dead: number[]): LamClient {
  return {
    universe: async () => universe,
    ping: async (id: number) => {
      if (dead.includes(id)) throw new LamError('UNREACHABLE', `n${id} is unreachable`);
      return { rttMs: 0.1, name: `h${id}`, pid: 100 + id };
    },
  } as unknown as LamClient;
}

const on = (ids: number[]): Placement[] => ids.map((id, rank) => ({ rank, node: node(id), part }));
const nodesOf = (ps: Placement[]) => ps.map((p) => p.node.id);

describe('which failures are recovered', () => {
  it('a rank killed by a signal from outside, a lost node: recovered', () => {
    expect(whyNotRecovered({ kind: 'killed', rank: 1, signal: 'SIGKILL' })).toBeNull();
    expect(whyNotRecovered({ kind: 'lost', rank: 2, node: 2 })).toBeNull();
  });

  it("the program's own errors and faults, a stop asked of mpirun: not recovered, saying why", () => {
    expect(whyNotRecovered({ kind: 'exited', rank: 1 })).toBe(
      'rank 1 ended with an error of its own',
    );
    expect(whyNotRecovered({ kind: 'aborted', rank: 3 })).toBe('rank 3 aborted the job');
    expect(whyNotRecovered({ kind: 'killed', rank: 0, signal: 'SIGSEGV' })).toMatch(
      /SIGSEGV, a fault of the program/,
    );
    expect(whyNotRecovered({ kind: 'signal', signal: 'SIGINT' })).toMatch(
      /mpirun was told to stop/,
    );
    expect(whyNotRecovered({ kind: 'start' })).toMatch(/could not start/);
  });
});

describe('where a recovered job runs', () => {
  const universe = [0, 1, 2, 3, 4].map(node);

  it('every node answers (a rank was killed): the same placement', async () => {
    expect(nodesOf(await placeAgain(client(universe, []), on([0, 1, 2, 0]), ''))).toEqual([
      0, 1, 2, 0,
    ]);
  });

  it("a lost node's ranks go round-robin to the job's remaining nodes", async () => {
    expect(nodesOf(await placeAgain(client(universe, [1]), on([0, 1, 2, 1]), ''))).toEqual([
      0, 0, 2, 2,
    ]);
  });

  it('with spares, each lost node gets one spare, in order, for all its ranks', async () => {
    const again = await placeAgain(client(universe, [1, 2]), on([0, 1, 1, 2]), 'n3-4');
    expect(nodesOf(again)).toEqual([0, 3, 3, 4]);
  });

  it('a spare that does not answer is skipped; with none left the error names the lost nodes', async () => {
    expect(nodesOf(await placeAgain(client(universe, [1, 3]), on([0, 1]), 'n3-4'))).toEqual([0, 4]);
    await expect(placeAgain(client(universe, [1, 3]), on([1, 1]), 'n3')).rejects.toThrow(
      /lost n1 and none of the spare nodes \(crlam_base_recover_nodes n3\) answers/,
    );
    await expect(placeAgain(client(universe, [0, 1]), on([0, 1]), '')).rejects.toThrow(
      /lost n0, n1 and no node of the job is left to restart on/,
    );
  });
});
