import type { ParamRegistry } from '@ssi/core';
import { defineModule } from '@ssi/core';
import type { CollActions, CollModule } from '@ssi/mpi';
import { makeAllgather, makeAllgatherv } from './allgather';
import { makeAllreduce } from './allreduce';
import { alltoall, alltoallv, alltoallw } from './alltoall';
import { barrierLinear, barrierTree } from './barrier';
import { bcastLinear, bcastTree } from './bcast';
import { gather, gatherv } from './gather';
import { allgatherInter, allreduceInter, barrierInter, bcastInter } from './inter';
import { reduceLinear, reduceTree } from './reduce';
import { makeReduceScatter } from './reduce-scatter';
import { exscan, scan } from './scan';
import { scatter, scatterv } from './scatter';

/** LAM's default for both crossovers. */
export const DEFAULT_CROSSOVER = 4;

/** Where linear algorithms give way to binomial trees, in processes. */
export interface Crossovers {
  /** barrier, bcast (and what is built on bcast) use trees from this many processes on. */
  crossover: number;
  /** reduce (and what is built on reduce) uses trees from this many processes on. */
  reduceCrossover: number;
}

/** A crossover parameter of the coll framework base, or LAM's default where it is not registered. */
function crossoverParam(params: ParamRegistry, name: string): number {
  if (!params.isRegistered(name)) return DEFAULT_CROSSOVER;
  const value = Number(params.get(name));
  return Number.isFinite(value) ? value : DEFAULT_CROSSOVER;
}

export function readCrossovers(params: ParamRegistry): Crossovers {
  return {
    crossover: crossoverParam(params, 'coll_crossover'),
    reduceCrossover: crossoverParam(params, 'coll_reduce_crossover'),
  };
}

/**
 * Every collective for a communicator of `size` processes. The algorithm choice is made here,
 * once (a communicator's size never changes; Ch. 6.1.4 puts such work in init): linear below
 * the crossover, binomial trees at or above it.
 */
export function actionsFor(size: number, { crossover, reduceCrossover }: Crossovers): CollActions {
  const bcast = size >= crossover ? bcastTree : bcastLinear;
  const reduce = size >= reduceCrossover ? reduceTree : reduceLinear;
  return {
    barrier: size >= crossover ? barrierTree : barrierLinear,
    bcast,
    gather,
    gatherv,
    scatter,
    scatterv,
    allgather: makeAllgather(bcast),
    allgatherv: makeAllgatherv(bcast),
    alltoall,
    alltoallv,
    alltoallw,
    reduce,
    allreduce: makeAllreduce(reduce, bcast),
    reduceScatter: makeReduceScatter(reduce),
    scan,
    exscan,
    barrierInter,
    bcastInter,
    allreduceInter,
    allgatherInter,
    // Layered on point-to-point, lam_basic keeps no messages of its own: the rpi drains the
    // network at a checkpoint, so there is nothing to do in any phase (App. D.2.4).
    interrupt() {},
    checkpoint() {},
    continue() {},
    restart() {},
  };
}

/** The lam_basic coll module: the basic implementation every other module falls back to. */
const lamBasic: CollModule = defineModule<CollModule>({
  ssiApi: '1.0.0',
  type: 'coll',
  // A literal, equal to the manifest's: the API this module was built for, not the host's.
  typeApi: '1.1.0',
  name: 'lam_basic',
  version: '1.0.0',
  hasCheckpoint: true,
  params: {
    priority: {
      type: 'int',
      default: 10,
      help: 'Priority of the lam_basic coll module (0-100); low, so that any specialised module wins',
    },
  },
  query(_comm, ctx) {
    // Works on every communicator.
    return { priority: ctx.params.get<number>('coll_lam_basic_priority') };
  },
  init(comm, ctx) {
    return actionsFor(comm.size, readCrossovers(ctx.params));
  },
});

export default lamBasic;
