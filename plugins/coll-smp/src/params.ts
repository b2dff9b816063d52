import type { ParamRegistry } from '@ssi/core';
import { SsiError } from '@ssi/core';

/** What the module decides with, read once per communicator in `init`. Sizes in bytes. */
export interface SmpSettings {
  /** Reductions may be re-associated (node by node) for built-in and commutative operators. */
  associative: boolean;
  /** bcast: a root buffer below this travels whole, one message per level (with shmMinBytes). */
  bcastMinBytes: number;
  /** bcast: a root buffer from this size on (one piece at most) goes striped (0: never). */
  bcastStripeMinBytes: number;
  /** bcast: segments of this many bytes, the levels overlapping (0: one piece). */
  bcastSegmentBytes: number;
  /** reduce takes the hierarchical path from this agreed operand size on (0: no agreement step). */
  reduceMinBytes: number;
  /** allreduce takes the hierarchical path from this agreed operand size on (0: likewise). */
  allreduceMinBytes: number;
  /** On-node data moves through a shared area per node (where shared memory is available). */
  shm: boolean;
  /** The area's slot size: the piece size of the area algorithms (a multiple of 8). */
  shmChunkBytes: number;
  /** bcast, reduce and allreduce take the area from this buffer size on. */
  shmMinBytes: number;
  /** `coll_smp_shm_single_copy`: bcast readers copy straight out of the writer's memory. */
  shmSingleCopy: boolean;
}

const minBytes = (collective: string) => ({
  type: 'int' as const,
  default: 0,
  help: `${collective}: operand size (bytes) from which the hierarchical algorithm is used; smaller operands take lam_basic's. Set (> 0), every ${collective} first agrees on the lengths (a length exchange over the communicator), so that all ranks compare the same length; operands of different lengths give ERR_TRUNCATE on every rank (0: always hierarchical, no extra exchange)`,
});

/** The module's parameters (`coll_smp_<name>`), as `laminfo --param coll smp` shows them. */
export const SMP_PARAMS = {
  priority: {
    type: 'int',
    default: 20,
    help: 'Priority of the smp coll module (0-100); 20: above lam_basic (10), measured faster on bcast, reduce, allreduce and barrier; below tuned (30), because the collectives smp leaves out come from lam_basic on the communicators it serves (raise it above 30 to prefer smp there). smp only offers itself on communicators spanning two or more nodes with two or more of their ranks on one node',
  },

  associative: {
    type: 'int',
    default: 1,
    help: 'reduce/allreduce: 1 lets smp reduce node by node (built-in and other commutative operators; the association differs from lam_basic, so floating-point sums may differ in the last bits), 0 leaves every reduction to lam_basic. Non-commutative operators always go to lam_basic',
  },
  bcast_min_bytes: {
    type: 'int',
    default: 0,
    help: "bcast: a root buffer below this many bytes travels whole, one message per level (the leaders' tree, then from each node's first rank to the others), as below coll_smp_shm_min_bytes; larger ones in pieces through the nodes' areas. Chosen by the root's length, which every rank learns from its first message (0: coll_smp_shm_min_bytes alone decides)",
  },
  bcast_stripe_min_bytes: {
    type: 'int',
    default: 0,
    help: "bcast through the shared areas where every node holds the same number k of the communicator's ranks and every node's ranks can read each other's memory: a root buffer of at least this many bytes and at most one piece (coll_smp_shm_chunk_bytes) is cut into k stripes, stripe j crosses between nodes from node rank j to node rank j (k connections at once instead of one between the leaders), and each node puts the stripes together by cross-memory attach (0, the default: never, every bcast goes down the leaders' tree; measured slower on one 2-CPU machine, where the two connections cost more CPU than one)",
  },
  bcast_segment_bytes: {
    type: 'int',
    default: 0,
    help: 'bcast: cut buffers into segments of this many bytes so that the leaders pass one segment between nodes while the previous one spreads on each node (0: no segments)',
  },
  reduce_min_bytes: minBytes('reduce'),
  allreduce_min_bytes: minBytes('allreduce'),
  shm: {
    type: 'int',
    default: 1,
    help: 'bcast (every size) and reduce/allreduce from coll_smp_shm_min_bytes: 1 moves the data on each node through a shared-memory area (one writer per node has each piece there, every other rank of the node copies it out; pieces cross between nodes while earlier ones spread), where @ssi/shm works; 0 always uses the per-node sub-communicators',
  },
  shm_chunk_bytes: {
    type: 'int',
    default: 4194304,
    help: "the shared area's piece size in bytes (a multiple of 8, at least 4096): buffers travel in pieces of this size, the levels overlapping; each node's area holds an 8 MiB bcast ring (at least 2 pieces) and 2 x (ranks on the node) pieces, committed as they are first used. Larger pieces mean fewer messages per call (what pays on an oversubscribed node), smaller ones more overlap and less memory",
  },
  shm_single_copy: {
    type: 'int',
    default: 1,
    help: "bcast through the shared area: 1 lets the node's other ranks copy each piece straight out of the writer's buffer (cross-memory attach, where the kernel allows it between the node's processes: tried when the area is made), one copy per rank instead of one into the area and one out; 0 always copies through the area",
  },
  shm_min_bytes: {
    type: 'int',
    default: 65536,
    help: 'reduce/allreduce operands of at least this many bytes go through the shared area, smaller ones travel in the messages of the length exchange that starts each call; bcast: a root buffer below this travels whole, one message per level (with or without an area), larger ones in pieces through the area',
  },
} as const;

function nonNegative(params: ParamRegistry, name: string): number {
  const value = Number(params.get(name));
  if (!Number.isInteger(value) || value < 0) {
    throw new SsiError(
      'BAD_PARAM',
      `${name} is ${JSON.stringify(params.get(name))}; expected a whole number of bytes >= 0`,
    );
  }
  return value;
}

function zeroOrOne(params: ParamRegistry, name: string): boolean {
  const value = Number(params.get(name));
  if (value !== 0 && value !== 1) {
    throw new SsiError(
      'BAD_PARAM',
      `${name} is ${JSON.stringify(params.get(name))}; expected 0 or 1`,
    );
  }
  return value === 1;
}

function chunkBytes(params: ParamRegistry, name: string): number {
  const value = nonNegative(params, name);
  if (value < 4096 || value % 8 !== 0) {
    throw new SsiError(
      'BAD_PARAM',
      `${name} is ${value}; expected a multiple of 8 bytes, at least 4096`,
    );
  }
  return value;
}

/** Reads and checks the parameters; a bad value is an error naming it and what was expected. */
export function readSmpSettings(params: ParamRegistry): SmpSettings {
  return {
    associative: zeroOrOne(params, 'coll_smp_associative'),
    bcastMinBytes: nonNegative(params, 'coll_smp_bcast_min_bytes'),
    bcastSegmentBytes: nonNegative(params, 'coll_smp_bcast_segment_bytes'),
    bcastStripeMinBytes: nonNegative(params, 'coll_smp_bcast_stripe_min_bytes'),
    reduceMinBytes: nonNegative(params, 'coll_smp_reduce_min_bytes'),
    allreduceMinBytes: nonNegative(params, 'coll_smp_allreduce_min_bytes'),
    shm: zeroOrOne(params, 'coll_smp_shm'),
    shmChunkBytes: chunkBytes(params, 'coll_smp_shm_chunk_bytes'),
    shmMinBytes: nonNegative(params, 'coll_smp_shm_min_bytes'),
    shmSingleCopy: zeroOrOne(params, 'coll_smp_shm_single_copy'),
  };
}
