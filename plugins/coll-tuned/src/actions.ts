import type { CollActions, CollComm, NumericArray, ReduceOp } from '@ssi/mpi';
import { allgatherRecursiveDoubling, allgatherRing } from './allgather';
import { allreduceRabenseifner, allreduceRecursiveDoubling, allreduceRing } from './allreduce';
import { alltoallLinear, alltoallPairwise } from './alltoall';
import { barrierDissemination, barrierRecursiveDoubling } from './barrier';
import { bcastBinomial, bcastScatterAllgather, makeBcastChain } from './bcast';
import type { Decisions } from './decisions';
import { reduceBinomial, reduceRing } from './reduce';
import { splitUnit } from './split';
import { isPowerOfTwo } from './virtual';

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

type AllreduceKind = 'recursive_doubling' | 'rabenseifner' | 'ring';

/**
 * Which allreduce runs for `op` on `bytes`. Rabenseifner and the ring cut the vector, and the
 * ring reorders operands: both only for built-in operators (commutative, element by element;
 * `split.ts`). A user-defined operator gets recursive doubling, which keeps vectors whole and
 * operands in rank order, whatever was asked.
 */
function allreduceKind(size: number, d: Decisions, op: ReduceOp, bytes: number): AllreduceKind {
  const cuttable = splitUnit(op) > 0 && op.commutative;
  const asked = d.algorithm.allreduce;
  if (!cuttable || asked === 'recursive_doubling') return 'recursive_doubling';
  if (asked !== 'auto') return asked;
  if (bytes < d.allreduceLarge) return 'recursive_doubling';
  return isPowerOfTwo(size) ? 'rabenseifner' : 'ring';
}

const ALLREDUCE: Record<AllreduceKind, Allreduce> = {
  recursive_doubling: allreduceRecursiveDoubling,
  rabenseifner: allreduceRabenseifner,
  ring: allreduceRing,
};

function chooseAllreduce(size: number, d: Decisions): Allreduce {
  return (comm, send, recv: NumericArray, op) =>
    ALLREDUCE[allreduceKind(size, d, op, recv.byteLength)](comm, send, recv, op);
}

/**
 * Reduce follows allreduce's choice so both give the same bits for the same operands: the ring
 * where allreduce takes the ring, else the binomial tree (recursive doubling's and
 * Rabenseifner's association).
 */
function chooseReduce(size: number, d: Decisions): Reduce {
  return (comm, send, recv, op, root) => {
    const bytes = (send ?? recv)!.byteLength;
    const ring = allreduceKind(size, d, op, bytes) === 'ring';
    return (ring ? reduceRing : reduceBinomial)(comm, send, recv, op, root);
  };
}

function chooseAllgather(size: number, d: Decisions): Allgather {
  // Recursive doubling needs a power of two; on other sizes the ring serves every request.
  if (!isPowerOfTwo(size)) return allgatherRing;
  switch (d.algorithm.allgather) {
    case 'recursive_doubling':
      return allgatherRecursiveDoubling;
    case 'ring':
      return allgatherRing;
    default:
      return (comm, send, recv) =>
        (recv.length < d.allgatherLarge ? allgatherRecursiveDoubling : allgatherRing)(
          comm,
          send,
          recv,
        );
  }
}

function chooseAlltoall(size: number, d: Decisions): Alltoall {
  switch (d.algorithm.alltoall) {
    case 'linear':
      return alltoallLinear;
    case 'pairwise':
      return alltoallPairwise;
    default:
      return (comm: CollComm, send, recv) =>
        (recv.length / size < d.alltoallLarge ? alltoallLinear : alltoallPairwise)(
          comm,
          send,
          recv,
        );
  }
}

/**
 * The collectives tuned provides for a communicator of `size` processes. Forced algorithms are
 * fixed here; `auto` chooses per call by the buffer's size. Everything else (gather, scatter,
 * the v- and w-variants, reduce-scatter, scans, intercommunicators) falls back to lam_basic
 * through the framework.
 */
export function actionsFor(size: number, d: Decisions): CollActions {
  return {
    barrier:
      d.algorithm.barrier === 'recursive_doubling'
        ? barrierRecursiveDoubling
        : barrierDissemination,
    bcast: chooseBcast(size, d),
    reduce: chooseReduce(size, d),
    allreduce: chooseAllreduce(size, d),
    allgather: chooseAllgather(size, d),
    alltoall: chooseAlltoall(size, d),
    // Layered on point-to-point, tuned keeps no messages of its own between calls: the rpi
    // drains the network at a checkpoint, so no phase has anything to do (App. D.2.4).
    interrupt() {},
    checkpoint() {},
    continue() {},
    restart() {},
  };
}
