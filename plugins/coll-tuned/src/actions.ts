import type { CollActions, CollComm, NumericArray, ReduceOp } from '@ssi/mpi';
import {
  allgatherBruck,
  allgatherGatherBcast,
  allgatherRecursiveDoubling,
  allgatherRing,
} from './allgather';
import {
  allreduceRabenseifner,
  allreduceRecursiveDoubling,
  allreduceReduceBcast,
  allreduceRing,
  type TunedAllreduce,
} from './allreduce';
import { alltoallBruck, alltoallLinear, alltoallPairwise } from './alltoall';
import { barrierDissemination, barrierRecursiveDoubling, barrierTree } from './barrier';
import { bcastBinomial, bcastScatterAllgather, makeBcastChain } from './bcast';
import type { Decisions } from './decisions';
import { reduceBinomial, reduceRing } from './reduce';
import {
  type ReduceScatter,
  reduceScatterRecursiveDoubling,
  reduceScatterRecursiveHalving,
  reduceScatterRing,
} from './reduce-scatter';
import { exscanRecursiveDoubling, scanRecursiveDoubling } from './scan';
import { ScratchStore } from './scratch';
import { splitUnit } from './split';
import { isPowerOfTwo } from './virtual';

type Barrier = NonNullable<CollActions['barrier']>;
type Bcast = NonNullable<CollActions['bcast']>;
type Allreduce = NonNullable<CollActions['allreduce']>;
type Reduce = NonNullable<CollActions['reduce']>;
type Allgather = NonNullable<CollActions['allgather']>;
type Alltoall = NonNullable<CollActions['alltoall']>;

function chooseBcast(size: number, d: Decisions): Bcast {
  const chain = makeBcastChain(d.bcastSegment);
  switch (d.algorithm.bcast) {
    case 'binomial':
      return bcastBinomial;
    case 'scatter_allgather':
      return bcastScatterAllgather;
    case 'chain':
      return chain;
    default:
      // On 2 processes the binomial tree is one message: nothing beats it.
      if (size <= 2) return bcastBinomial;
      return (comm, buf, root) =>
        (buf.length >= d.bcastLarge ? bcastScatterAllgather : bcastBinomial)(comm, buf, root);
  }
}

const BARRIER: Record<Exclude<Decisions['algorithm']['barrier'], 'auto'>, Barrier> = {
  dissemination: barrierDissemination,
  recursive_doubling: barrierRecursiveDoubling,
  tree: barrierTree,
};

type AllreduceKind = 'recursive_doubling' | 'rabenseifner' | 'ring' | 'reduce_bcast';

/**
 * Which allreduce runs for `op` on `bytes`. Rabenseifner and the ring cut the vector, and the
 * ring reorders operands: both only for built-in operators (commutative, element by element;
 * `split.ts`). A user-defined operator gets recursive doubling (or reduce_bcast, when asked or
 * crowded), which keep vectors whole and operands in rank order, whatever was asked.
 */
function allreduceKind(
  d: Decisions,
  op: ReduceOp,
  bytes: number,
  size: number,
  crowded: boolean,
): AllreduceKind {
  const cuttable = splitUnit(op) > 0 && op.commutative;
  const asked = d.algorithm.allreduce;
  // reduce_bcast keeps vectors whole and operands in rank order: for any operator.
  if (asked === 'reduce_bcast') return asked;
  if (asked === 'auto') {
    // Large: Rabenseifner on a power of two (log2 n pairwise swaps each way, measured faster
    // and cheaper in CPU than the ring's 2 (n - 1) steps, see README), the ring on other sizes,
    // where Rabenseifner would first fold whole vectors of the extra ranks.
    if (bytes >= d.allreduceLarge && cuttable) return isPowerOfTwo(size) ? 'rabenseifner' : 'ring';
    // Crowded on a power of two: recursive doubling all the same, whose first rounds pair
    // neighbouring ranks, which mpirun's oversubscribed binding puts on one CPU (see
    // `crowdedBarrier`); on other sizes its folding costs two more latencies.
    return crowded && !isPowerOfTwo(size) ? 'reduce_bcast' : 'recursive_doubling';
  }
  if (!cuttable || asked === 'recursive_doubling') return 'recursive_doubling';
  return asked;
}

function chooseAllreduce(d: Decisions, crowded: boolean, store: ScratchStore): Allreduce {
  const ALLREDUCE: Record<AllreduceKind, TunedAllreduce> = {
    recursive_doubling: allreduceRecursiveDoubling,
    rabenseifner: allreduceRabenseifner,
    ring: (comm, send, recv, op, scratch) =>
      allreduceRing(comm, send, recv, op, scratch, d.allreduceSegment),
    reduce_bcast: allreduceReduceBcast,
  };
  return (comm, send, recv: NumericArray, op) =>
    ALLREDUCE[allreduceKind(d, op, recv.byteLength, comm.coll.size, crowded)](
      comm,
      send,
      recv,
      op,
      store.of(comm),
    );
}

/**
 * Reduce: the binomial tree (recursive doubling's association, so it gives the same bits as the
 * recursive-doubling and reduce_bcast allreduces), or, forced, the ring's reduce-scatter and a
 * gather to the root (the ring allreduce's association; built-in operators only). The ring
 * measured 1.3x slower than the tree at 4 MiB on 8 ranks, so `auto` keeps the tree.
 */
function chooseReduce(d: Decisions, store: ScratchStore): Reduce {
  const ring = d.algorithm.reduce === 'ring';
  return (comm, send, recv, op, root) => {
    const cuttable = ring && splitUnit(op) > 0 && op.commutative;
    return (cuttable ? reduceRing : reduceBinomial)(comm, send, recv, op, root, store.of(comm));
  };
}

function chooseAllgather(size: number, d: Decisions, crowded: boolean): Allgather {
  // Recursive doubling needs a power of two; Bruck takes its place (log2 n rounds) elsewhere.
  const doubling = isPowerOfTwo(size) ? allgatherRecursiveDoubling : allgatherBruck;
  // Crowded: the fewest messages (gather + bcast: 2 (n - 1) instead of n log2 n).
  const small = crowded ? allgatherGatherBcast : doubling;
  switch (d.algorithm.allgather) {
    case 'recursive_doubling':
      return doubling;
    case 'gather_bcast':
      return allgatherGatherBcast;
    case 'bruck':
      return allgatherBruck;
    case 'ring':
      return allgatherRing;
    default:
      return (comm, send, recv) =>
        (recv.length < d.allgatherLarge ? small : allgatherRing)(comm, send, recv);
  }
}

function chooseAlltoall(size: number, d: Decisions): Alltoall {
  switch (d.algorithm.alltoall) {
    case 'linear':
      return alltoallLinear;
    case 'pairwise':
      return alltoallPairwise;
    case 'bruck':
      return alltoallBruck;
    default:
      return (comm: CollComm, send, recv) => {
        const block = recv.length / size;
        // On 2 processes Bruck is the one message linear sends, plus copies.
        if (block < d.alltoallSmall && size > 2) return alltoallBruck(comm, send, recv);
        return (block < d.alltoallLarge ? alltoallLinear : alltoallPairwise)(comm, send, recv);
      };
  }
}

type ReduceScatterKind = 'recursive_halving' | 'ring' | 'recursive_doubling';

/**
 * Which reduce-scatter runs. Recursive halving and the ring cut the vector (at the callers'
 * block boundaries) and reorder operands: commutative built-in operators only, with every block
 * in whole units of the operator (`split.ts`). Anything else gets recursive doubling, which
 * keeps vectors whole and operands in rank order.
 */
function reduceScatterKind(
  d: Decisions,
  op: ReduceOp,
  counts: readonly number[],
  bytes: number,
): ReduceScatterKind {
  const unit = splitUnit(op);
  const cuttable = unit > 0 && op.commutative && counts.every((n) => n % unit === 0);
  const asked = d.algorithm.reduce_scatter;
  if (!cuttable || asked === 'recursive_doubling') return 'recursive_doubling';
  if (asked !== 'auto') return asked;
  return bytes >= d.reduceScatterLarge ? 'ring' : 'recursive_halving';
}

const REDUCE_SCATTER: Record<ReduceScatterKind, ReduceScatter> = {
  recursive_halving: reduceScatterRecursiveHalving,
  ring: reduceScatterRing,
  recursive_doubling: reduceScatterRecursiveDoubling,
};

function chooseReduceScatter(d: Decisions, store: ScratchStore): ReduceScatter {
  return (comm, send, recv, counts, op) => {
    const operand = send ?? recv;
    const bytes = counts.reduce((a, b) => a + b, 0) * operand.BYTES_PER_ELEMENT;
    const kind = reduceScatterKind(d, op, counts, bytes);
    return REDUCE_SCATTER[kind](comm, send, recv, counts, op, store.of(comm));
  };
}

/**
 * The barrier of a crowded communicator. On a power of two, recursive doubling: in round k rank
 * r swaps with r ^ 2^k, so the first rounds stay within blocks of neighbouring ranks, and mpirun
 * binds an oversubscribed node's ranks in such blocks, one per CPU (up to
 * `lam_bind_oversubscribed` ranks a CPU): most wake-ups then stay on their CPU, which costs a
 * fraction of waking a process on another one. Measured at 8 ranks on 2 vCPUs, tcp rpi, bound in blocks: 128-150 µs against the
 * tree's 160-213; unbound the two were level (173-198 against 177-196). Other sizes keep the
 * binomial tree (recursive doubling would fold the extra ranks in two more latencies).
 */
function crowdedBarrier(size: number): 'recursive_doubling' | 'tree' {
  return isPowerOfTwo(size) ? 'recursive_doubling' : 'tree';
}

/**
 * The collectives tuned provides for a communicator of `size` processes, `crowded` when one of
 * its nodes holds `crowded_ranks` of them or more. Forced algorithms are fixed here; `auto`
 * chooses per call by the buffer's size. Everything else (gather, scatter,
 * the v- and w-variants, intercommunicators, and scan/exscan unless `scan_algorithm` is
 * `recursive_doubling`)
 * falls back to lam_basic through the framework.
 */
export function actionsFor(size: number, d: Decisions, crowded = false): CollActions {
  const barrier = d.algorithm.barrier;
  const store = new ScratchStore(d.scratchBytes);
  return {
    barrier:
      BARRIER[barrier === 'auto' ? (crowded ? crowdedBarrier(size) : 'dissemination') : barrier],
    bcast: chooseBcast(size, d),
    reduce: chooseReduce(d, store),
    allreduce: chooseAllreduce(d, crowded, store),
    allgather: chooseAllgather(size, d, crowded),
    alltoall: chooseAlltoall(size, d),
    reduceScatter: chooseReduceScatter(d, store),
    // `auto` and `linear`: leave both out, so lam_basic's chain serves them.
    ...(d.algorithm.scan === 'recursive_doubling'
      ? { scan: scanRecursiveDoubling, exscan: exscanRecursiveDoubling }
      : {}),
    // Layered on point-to-point, tuned keeps no messages of its own between calls: the rpi
    // drains the network at a checkpoint, so no phase has anything to do (App. D.2.4).
    interrupt() {},
    checkpoint() {},
    continue() {},
    restart() {},
  };
}
