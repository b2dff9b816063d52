import type { ParamRegistry, ParamSpec } from '@ssi/core';
import { SsiError } from '@ssi/core';

/** The algorithms each collective may be forced to; `auto` chooses by size per call. */
export const ALGORITHM_CHOICES = {
  barrier: ['auto', 'dissemination', 'recursive_doubling', 'tree'],
  bcast: ['auto', 'binomial', 'scatter_allgather', 'chain'],
  allreduce: ['auto', 'recursive_doubling', 'rabenseifner', 'ring', 'reduce_bcast'],
  reduce: ['auto', 'binomial', 'ring'],
  allgather: ['auto', 'recursive_doubling', 'bruck', 'ring', 'gather_bcast'],
  alltoall: ['auto', 'linear', 'pairwise', 'bruck'],
  reduce_scatter: ['auto', 'recursive_halving', 'ring', 'recursive_doubling'],
  scan: ['auto', 'recursive_doubling', 'linear'],
} as const;

type Collective = keyof typeof ALGORITHM_CHOICES;
export type Algorithms = { [C in Collective]: (typeof ALGORITHM_CHOICES)[C][number] };

/** What `auto` decides with, and what the user forced. Sizes in bytes. */
export interface Decisions {
  algorithm: Algorithms;
  /** bcast: scatter-allgather from this buffer size on (on more than 2 processes). */
  bcastLarge: number;
  /** bcast: segment size of the pipelined chain. */
  bcastSegment: number;
  /** allreduce: Rabenseifner (powers of two) or ring from this vector size on. */
  allreduceLarge: number;
  /** allreduce: the ring's reduce-scatter steps travel in pieces of this size (0: whole). */
  allreduceSegment: number;
  /** allgather: ring from this total (all blocks) size on, recursive doubling below. */
  allgatherLarge: number;
  /** alltoall: pairwise exchange from this block (per pair) size on, linear below. */
  alltoallLarge: number;
  /** alltoall: Bruck below this block (per pair) size, on more than 2 processes. */
  alltoallSmall: number;
  /** reduce-scatter: ring from this vector size on. */
  reduceScatterLarge: number;
  /** Ranks on one node from which `auto` takes the algorithms with the fewest messages. */
  crowdedRanks: number;
  /** Scratch memory a communicator keeps between reductions (`scratch.ts`). */
  scratchBytes: number;
}

const algorithmParam = (c: Collective, auto: string): ParamSpec => ({
  type: 'string',
  default: 'auto',
  help: `${c} algorithm: ${ALGORITHM_CHOICES[c].join(', ')} (auto: ${auto})`,
});

const bytesParam = (value: number, help: string): ParamSpec => ({
  type: 'int',
  default: value,
  help,
});

/** The module's parameters (`coll_tuned_<name>`), as `laminfo --param coll tuned` shows them. */
export const TUNED_PARAMS = {
  priority: {
    type: 'int',
    default: 30,
    help: 'Priority of the tuned coll module (0-100); above lam_basic (10), so it serves every intracommunicator by default (measured not slower than lam_basic on any collective it provides); lam_basic fills in what it leaves out',
  },
  barrier_algorithm: algorithmParam(
    'barrier',
    'dissemination; when crowded (crowded_ranks) recursive_doubling on a power of two, else tree',
  ),
  bcast_algorithm: algorithmParam(
    'bcast',
    'binomial, scatter_allgather from bcast_large_bytes on more than 2 processes',
  ),
  allreduce_algorithm: algorithmParam(
    'allreduce',
    'recursive_doubling (reduce_bcast when crowded on a size other than a power of two); from ' +
      'allreduce_large_bytes on, for built-in ' +
      'operators, rabenseifner on a power-of-two size, else ring (user-defined operators never ' +
      'get ring or rabenseifner)',
  ),
  reduce_algorithm: algorithmParam(
    'reduce',
    "binomial (ring: for built-in operators, the ring allreduce's association)",
  ),
  allgather_algorithm: algorithmParam(
    'allgather',
    'below allgather_large_bytes recursive_doubling on a power-of-two size, else bruck ' +
      '(gather_bcast when crowded); from it ring (recursive_doubling forced on other sizes: bruck)',
  ),
  alltoall_algorithm: algorithmParam(
    'alltoall',
    'bruck below alltoall_small_bytes on more than 2 processes (default: off), linear, pairwise ' +
      'from alltoall_large_bytes (default: off)',
  ),
  reduce_scatter_algorithm: algorithmParam(
    'reduce_scatter',
    'for commutative built-in operators recursive_halving, ring from reduce_scatter_large_bytes; ' +
      'other operators always recursive_doubling (rank order kept)',
  ),
  scan_algorithm: algorithmParam(
    'scan',
    "linear, which leaves scan and exscan to lam_basic's chain (measured faster for calls back " +
      'to back)',
  ),
  // On one node every copy crosses the same memory, and scatter-allgather copies more in all
  // than the binomial tree (measured 1.8-2.3x slower at 4 MiB on 4 and 8 ranks): off by default.
  bcast_large_bytes: bytesParam(
    1 << 30,
    'bcast: buffer size (bytes) from which auto uses scatter_allgather (default 1 GiB: binomial, ' +
      'measured faster on one node; lower it where links are independent)',
  ),
  bcast_segment_bytes: bytesParam(65_536, 'bcast: segment size (bytes) of the chain algorithm'),
  allreduce_large_bytes: bytesParam(
    1_048_576,
    'allreduce: vector size (bytes) from which auto uses rabenseifner (power-of-two sizes) or ring ' +
      '(built-in operators)',
  ),
  allreduce_segment_bytes: bytesParam(
    0,
    "allreduce: the ring's reduce-scatter steps travel in pieces of this many bytes, each combined " +
      'as it arrives while the rest travels (0: whole blocks)',
  ),
  allgather_large_bytes: bytesParam(
    1_048_576,
    'allgather: total size of all blocks (bytes) from which auto uses ring',
  ),
  // Linear measured faster than or equal to pairwise at 64 KiB and 1 MiB per pair on 2-8 ranks
  // of one node (1 MiB on 4 ranks: 2.5-3.2 ms against 3.4-4.0): off by default.
  alltoall_large_bytes: bytesParam(
    1 << 30,
    'alltoall: block size per pair (bytes) from which auto uses pairwise (default 1 GiB: linear, ' +
      'measured faster on one node; lower it where many large messages at once congest the links)',
  ),
  // Bruck's log2 n rounds lost to linear's one round of n - 1 messages at 8 B per pair on 4 and
  // 8 ranks of one node once waiting ranks poll (155 / 526 us linear against 188 / 657): off.
  alltoall_small_bytes: bytesParam(
    0,
    'alltoall: block size per pair (bytes) below which auto uses bruck (more than 2 processes; ' +
      'default 0: off, linear measured faster on one node; raise it where latency per round is ' +
      'small against the cost per message)',
  ),
  reduce_scatter_large_bytes: bytesParam(
    65_536,
    'reduce_scatter: vector size (bytes) from which auto uses ring',
  ),
  scratch_bytes: bytesParam(
    8 * 1_048_576,
    'scratch memory (bytes) each communicator keeps between reductions (allreduce, reduce, ' +
      'reduce_scatter) instead of allocating it per call; larger needs are allocated per call',
  ),
  crowded_ranks: {
    type: 'int',
    default: 5,
    help:
      'ranks of a communicator on one node from which auto takes the algorithms with the fewest ' +
      'messages (gather_bcast allgather; tree barrier and reduce_bcast allreduce on sizes other ' +
      'than powers of two, recursive doubling on powers of two, whose first rounds stay within ' +
      "the blocks mpirun's oversubscribed binding puts on one CPU): where processes outnumber " +
      'cores, every message costs CPU time the others wait for (measured: from 8 ranks on 2 cores)',
  },
} satisfies Record<string, ParamSpec>;

const full = (name: keyof typeof TUNED_PARAMS) => `coll_tuned_${name}`;

function readAlgorithm<C extends Collective>(params: ParamRegistry, c: C): Algorithms[C] {
  const name = full(`${c}_algorithm`);
  const value = String(params.get(name));
  const choices: readonly string[] = ALGORITHM_CHOICES[c];
  if (!choices.includes(value)) {
    throw new SsiError(
      'BAD_PARAM',
      `${name} is "${value}"; expected one of ${choices.join(', ')} (--ssi ${name} <algorithm>)`,
    );
  }
  return value as Algorithms[C];
}

function readBytes(params: ParamRegistry, name: keyof typeof TUNED_PARAMS, least: number): number {
  const value = Number(params.get(full(name)));
  if (!Number.isInteger(value) || value < least) {
    throw new SsiError(
      'BAD_PARAM',
      `${full(name)} is ${params.get(full(name))}; expected a whole number ${name.endsWith('_bytes') ? 'of bytes ' : ''}>= ${least}`,
    );
  }
  return value;
}

/** The decisions for one communicator, read once in `init`; bad values are errors. */
export function readDecisions(params: ParamRegistry): Decisions {
  return {
    algorithm: {
      barrier: readAlgorithm(params, 'barrier'),
      bcast: readAlgorithm(params, 'bcast'),
      allreduce: readAlgorithm(params, 'allreduce'),
      reduce: readAlgorithm(params, 'reduce'),
      allgather: readAlgorithm(params, 'allgather'),
      alltoall: readAlgorithm(params, 'alltoall'),
      reduce_scatter: readAlgorithm(params, 'reduce_scatter'),
      scan: readAlgorithm(params, 'scan'),
    },
    bcastLarge: readBytes(params, 'bcast_large_bytes', 0),
    bcastSegment: readBytes(params, 'bcast_segment_bytes', 1),
    allreduceLarge: readBytes(params, 'allreduce_large_bytes', 0),
    allreduceSegment: readBytes(params, 'allreduce_segment_bytes', 0),
    allgatherLarge: readBytes(params, 'allgather_large_bytes', 0),
    alltoallLarge: readBytes(params, 'alltoall_large_bytes', 0),
    alltoallSmall: readBytes(params, 'alltoall_small_bytes', 0),
    reduceScatterLarge: readBytes(params, 'reduce_scatter_large_bytes', 0),
    crowdedRanks: readBytes(params, 'crowded_ranks', 1),
    scratchBytes: readBytes(params, 'scratch_bytes', 0),
  };
}
