import { othersThan } from './area-flow';
import { binomialTree } from './binomial';
import type { Hierarchy } from './hierarchy';

/** Where a bcast from one root goes on this rank: the same for every call from that root. */
export interface BcastRoute {
  /** The rank the root is on the same node as. */
  onRootNode: boolean;
  /** The node rank that has each piece first: the root on its node, the leader elsewhere. */
  writer: number;
  /** The node's other ranks (all but the writer). */
  readers: readonly number[];
  /** This leader's parent in the leaders' tree (-1 at the root's node or off the leaders). */
  parent: number;
  /** This leader's children in the leaders' tree, the largest subtree first. */
  children: readonly number[];
  /**
   * A striped call's lane (`bcast-striped.ts`), as ranks of the communicator: this node rank's
   * peer on the parent node in the tree of the nodes (-1 on the root's node), and on each child
   * node, the largest subtree first. Only used where every node holds as many ranks.
   */
  laneFrom: number;
  laneTo: readonly number[];
}

/** Per served communicator, the route of each root seen (small bcasts are a few µs of work). */
const routes = new WeakMap<Hierarchy, Map<number, BcastRoute>>();

/** The route of a bcast from `root` on `h`, computed once per root. */
export function bcastRoute(h: Hierarchy, root: number): BcastRoute {
  let byRoot = routes.get(h);
  if (byRoot === undefined) {
    byRoot = new Map();
    routes.set(h, byRoot);
  }
  let route = byRoot.get(root);
  if (route === undefined) {
    const { loc, local, leaders } = h;
    const rootNode = loc.nodeOf(root);
    const onRootNode = loc.node === rootNode;
    const writer = onRootNode ? loc.localRanks.indexOf(root) : 0;
    const tree = leaders ? binomialTree(leaders.rank, rootNode, leaders.size) : null;
    // The same tree over the nodes, seen from this rank's node (node i is leader rank i).
    const nodes = binomialTree(loc.node, rootNode, loc.nodes.length);
    const lane = (node: number) => loc.nodes[node]![loc.localRank] ?? -1;
    route = {
      onRootNode,
      writer,
      readers: othersThan(local.size, writer),
      parent: tree ? tree.parent : -1,
      children: tree ? tree.children.reverse() : [],
      laneFrom: nodes.parent < 0 ? -1 : lane(nodes.parent),
      laneTo: nodes.children.reverse().map(lane),
    };
    byRoot.set(root, route);
  }
  return route;
}
