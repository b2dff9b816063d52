/**
 * Node layouts for real-process tests: `[4, 1]` puts ranks 0-3 on one node and rank 4 on a
 * second. Each node is a distinct loopback address (127.0.0.2, .3, ...: rpi listeners bind there,
 * all traffic stays on loopback) with its own node id, as mpirun gives them; the launcher's block
 * placement cannot express uneven layouts such as 4+1, so the per-rank environment does.
 */
export interface Layout {
  np: number;
  /** `4+1`, for test names and messages. */
  name: string;
  rankEnv: (rank: number) => Record<string, string>;
}

export function layout(perNode: readonly number[]): Layout {
  if (perNode.length === 0 || perNode.some((n) => !Number.isInteger(n) || n < 1)) {
    throw new Error(`layout ${JSON.stringify(perNode)}: expected ranks per node, each >= 1`);
  }
  const nodeOf: number[] = perNode.flatMap((n, node) => new Array<number>(n).fill(node));
  const maxPerNode = String(Math.max(...perNode));
  return {
    np: nodeOf.length,
    name: perNode.join('+'),
    rankEnv: (rank) => {
      const node = nodeOf[rank]!;
      return {
        SSI_NODE_ID: String(node),
        SSI_NODE_NAME: `smp-testhost${node}`,
        SSI_HOST_ADDR: `127.0.0.${node + 2}`,
        SSI_MAX_NODE_RANKS: maxPerNode,
      };
    },
  };
}
