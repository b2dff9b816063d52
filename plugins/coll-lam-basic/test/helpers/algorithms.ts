/** The intercommunicator functions as the module hands them out. */
import type { CollActions } from '@ssi/mpi';
import { actionsFor, DEFAULT_CROSSOVER } from '../../src/module';

const actions = actionsFor(4, {
  crossover: DEFAULT_CROSSOVER,
  reduceCrossover: DEFAULT_CROSSOVER,
});

export const inter: Required<
  Pick<CollActions, 'barrierInter' | 'bcastInter' | 'allreduceInter' | 'allgatherInter'>
> = {
  barrierInter: actions.barrierInter!,
  bcastInter: actions.bcastInter!,
  allreduceInter: actions.allreduceInter!,
  allgatherInter: actions.allgatherInter!,
};
