import { ErrorClass, MpiError } from '../errors';
import type { Proc } from '../proc';

/**
 * Which ranks of a group share a node (from the GPS node id of each rank's process): what a
 * hierarchical coll module (MagPIe's smp: one communicator per node plus one of node leaders)
 * needs to build its sub-communicators in `init`. Ranks are ranks of the communicator's (local)
 * group; nodes are numbered densely 0..nodes.length-1 in the order of their lowest rank, so every
 * member computes the same numbering.
 */
export interface CollLocality {
  /** The ranks on each node, ascending; nodes ordered by their lowest rank. */
  readonly nodes: readonly (readonly number[])[];
  /** The index in `nodes` of the node that `rank` runs on. */
  nodeOf(rank: number): number;
  /** The index in `nodes` of this process's node (a `split` colour for per-node communicators). */
  readonly node: number;
  /** The ranks sharing this process's node, ascending (this rank included). */
  readonly localRanks: readonly number[];
  /** This rank's position in `localRanks` (0 on the leader). */
  readonly localRank: number;
  /** Each node's leader, its lowest rank, in node order (`leaders[i] === nodes[i][0]`). */
  readonly leaders: readonly number[];
  /** Whether this process leads its node. */
  readonly isLeader: boolean;
  /** Every rank on one node (a hierarchy would gain nothing). */
  readonly singleNode: boolean;
}

/** The locality of the group `procs` as seen by the member with rank `rank`. */
export function localityOf(procs: readonly Proc[], rank: number): CollLocality {
  const indexOfNodeId = new Map<number, number>();
  const nodeOfRank: number[] = [];
  const nodes: number[][] = [];
  procs.forEach((p, r) => {
    let index = indexOfNodeId.get(p.gps.node);
    if (index === undefined) {
      // First seen at its lowest rank: nodes come out ordered by lowest rank.
      index = nodes.push([]) - 1;
      indexOfNodeId.set(p.gps.node, index);
    }
    nodes[index]!.push(r);
    nodeOfRank.push(index);
  });
  const node = nodeOfRank[rank] ?? -1;
  const localRanks = nodes[node] ?? [];
  return {
    nodes,
    nodeOf(r: number): number {
      const n = nodeOfRank[r];
      if (n === undefined) {
        throw new MpiError(
          ErrorClass.ERR_RANK,
          `locality.nodeOf: invalid rank ${String(r)}; the group has ranks 0-${procs.length - 1}`,
        );
      }
      return n;
    },
    node,
    localRanks,
    localRank: localRanks.indexOf(rank),
    leaders: nodes.map((ranks) => ranks[0]!),
    isLeader: localRanks[0] === rank,
    singleNode: nodes.length <= 1,
  };
}
