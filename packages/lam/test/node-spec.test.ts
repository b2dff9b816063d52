import { describe, expect, it } from 'vitest';
import {
  formatNodeLine,
  parseNodeId,
  resolveNodeSpec,
  takeNodeSpec,
  type UniverseNode,
} from '../src/index';

const node = (id: number, cpus: number, schedulable = true): UniverseNode => ({
  id,
  name: `127.0.0.${id + 2}`,
  address: `127.0.0.${id + 2}`,
  port: 1000 + id,
  cpus,
  origin: id === 0,
  schedulable,
  pid: 100 + id,
});
const universe = [node(0, 2), node(1, 1), node(3, 1, false)];
const ids = (nodes: UniverseNode[]) => nodes.map((n) => n.id);

describe('node notation', () => {
  it('splits node words from the command that follows', () => {
    const { items, rest } = takeNodeSpec(['n0-1,3', 'C', 'hostname', 'n1']);
    expect(items).toEqual([{ kind: 'nodes', ids: [0, 1, 3] }, { kind: 'all-cpus' }]);
    expect(rest).toEqual(['hostname', 'n1']);
  });

  it('resolves N and C to schedulable nodes and CPUs, nX and cX explicitly', () => {
    expect(ids(resolveNodeSpec([{ kind: 'all-nodes' }], universe))).toEqual([0, 1]);
    expect(
      ids(resolveNodeSpec([{ kind: 'all-nodes' }], universe, { includeUnschedulable: true })),
    ).toEqual([0, 1, 3]);
    expect(ids(resolveNodeSpec([{ kind: 'all-cpus' }], universe))).toEqual([0, 0, 1]);
    expect(ids(resolveNodeSpec(takeNodeSpec(['n3', 'c2']).items, universe))).toEqual([3, 1]);
  });

  it('names the unknown node and what the universe has', () => {
    expect(() => resolveNodeSpec(takeNodeSpec(['n2']).items, universe)).toThrow(
      'node n2 is not in the universe (it has n0, n1, n3); see lamnodes',
    );
    expect(() => resolveNodeSpec(takeNodeSpec(['c3']).items, universe)).toThrow(
      /CPU c3 is not in the universe/,
    );
    expect(() => takeNodeSpec(['n3-1']).items).toThrow(/runs backwards/);
    expect(parseNodeId('n4')).toBe(4);
    expect(() => parseNodeId('four')).toThrow(/not a node id/);
  });

  it('prints lamnodes lines with flags', () => {
    expect(formatNodeLine(universe[0]!, 0)).toBe('n0\t127.0.0.2:2:origin,this_node');
    expect(formatNodeLine(universe[2]!, 0)).toBe('n3\t127.0.0.5:1:no_schedule');
  });
});
