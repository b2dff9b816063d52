import { describe, expect, it } from 'vitest';
import type { ProcLocation } from '../src/index';
import { Group, Proc, rebuildProcessList, sortProcs } from '../src/index';

/** The process list of a restarted job: same world ranks, new places, same Proc objects. */
const at = (grank: number, node: number, pid: number, host = `10.0.0.${node}`): ProcLocation => ({
  gps: { node, pid, index: grank, grank },
  host,
  processorName: `node${node}`,
});

function job(): Proc[] {
  // Ranks 0..3 on nodes 0 and 1, listed out of order: sortProcs orders them.
  const procs = [at(2, 1, 300), at(0, 0, 100), at(3, 1, 400), at(1, 0, 200)].map(
    (w) => new Proc(w.gps, w.host, w.processorName),
  );
  return sortProcs(procs);
}

describe('rebuildProcessList', () => {
  it('relocates every entry to its new place, keeps the objects and re-sorts', () => {
    const procs = job();
    const before = [...procs];
    const group = new Group([procs[3]!, procs[1]!], procs[0]!); // a group references entries, not copies
    const list = rebuildProcessList(procs, [at(3, 0, 41), at(1, 2, 11), at(0, 2, 1), at(2, 0, 21)]);
    expect(list).toBe(procs);
    expect(new Set(list)).toEqual(new Set(before));
    expect(list.map((p) => p.gps.grank)).toEqual([0, 1, 2, 3]);
    expect(list.map((p) => p.listIndex)).toEqual([0, 1, 2, 3]);
    expect(list[3]!.gps).toEqual({ node: 0, pid: 41, index: 3, grank: 3 });
    expect(list[3]!.host).toBe('10.0.0.0');
    expect(list[1]!.processorName).toBe('node2');
    expect(group.procs[0]!.gps.pid).toBe(41); // the group sees the new place
  });

  it('returns the list in the order of Ch. 5.1.2 (world rank first), whatever order it came in', () => {
    const procs = job().reverse();
    const list = rebuildProcessList(procs, [at(0, 1, 1), at(1, 1, 2), at(2, 0, 3), at(3, 0, 4)]);
    expect(list.map((p) => p.gps.grank)).toEqual([0, 1, 2, 3]);
    expect(list.map((p) => p.listIndex)).toEqual([0, 1, 2, 3]);
  });

  it('refuses another job size, naming both sizes', () => {
    expect(() => rebuildProcessList(job(), [at(0, 0, 1), at(1, 0, 2), at(2, 0, 3)])).toThrow(
      /has 3 process\(es\) but the job has 4/,
    );
  });

  it('refuses a missing rank, naming it and the stranger in its place', () => {
    expect(() =>
      rebuildProcessList(job(), [at(0, 0, 1), at(1, 0, 2), at(7, 0, 3), at(3, 0, 4)]),
    ).toThrow(/no location for world rank\(s\) 2 and names rank\(s\) 7 that are not in the job/);
  });

  it('refuses a duplicate rank, naming it and where it appears', () => {
    expect(() =>
      rebuildProcessList(job(), [at(0, 0, 1), at(1, 0, 2), at(1, 0, 3), at(3, 0, 4)]),
    ).toThrow(/names world rank 1 twice \(locations 1 and 2\)/);
  });

  it('refuses a malformed location and changes nothing before it throws', () => {
    const procs = job();
    const bad = { ...at(3, 0, 4), gps: { node: 0, pid: -1, index: 3, grank: 3 } };
    expect(() => rebuildProcessList(procs, [at(0, 5, 1), at(1, 5, 2), at(2, 5, 3), bad])).toThrow(
      /location 3 of the new GPS exchange: gps.pid is -1, expected a non-negative integer/,
    );
    expect(() =>
      rebuildProcessList(procs, [at(0, 5, 1), at(1, 5, 2), at(2, 5, 3), at(3, 5, 4, '')]),
    ).toThrow(/host is "", expected a node address/);
    expect(procs.map((p) => p.gps.node)).toEqual([0, 0, 1, 1]);
  });
});

describe('Proc.relocate', () => {
  it('moves an entry and keeps its world rank as identity', () => {
    const [p] = job();
    p!.relocate(at(0, 3, 999, '127.0.0.9'));
    expect(p!.gps).toEqual({ node: 3, pid: 999, index: 0, grank: 0 });
    expect(p!.host).toBe('127.0.0.9');
    expect(p!.describe()).toBe('rank 0 (node 3, pid 999)');
    expect(() => p!.relocate(at(1, 3, 999))).toThrow(
      /cannot relocate rank 0 \(node 3, pid 999\) to the location of world rank 1/,
    );
  });

  it('copies the GPS it is given: a later change of the caller object does not move it', () => {
    const [p] = job();
    const where = at(0, 3, 999);
    p!.relocate(where);
    where.gps.node = 7;
    expect(p!.gps.node).toBe(3);
  });
});
