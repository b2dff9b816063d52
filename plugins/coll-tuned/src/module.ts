import { defineModule } from '@ssi/core';
import type { CollModule } from '@ssi/mpi';
import { actionsFor } from './actions';
import { readDecisions, TUNED_PARAMS } from './decisions';

/** The tuned coll module: today's algorithms, chosen by size; the rest falls back to lam_basic. */
const tuned: CollModule = defineModule<CollModule>({
  ssiApi: '1.0.0',
  type: 'coll',
  // A literal, equal to the manifest's: the API this module was built for, not the host's.
  typeApi: '1.1.0',
  name: 'tuned',
  version: '1.0.0',
  hasCheckpoint: true,
  params: TUNED_PARAMS,
  query(_comm, ctx) {
    // Point-to-point only: it serves every intracommunicator; intercommunicator functions come
    // from lam_basic.
    return { priority: ctx.params.get<number>('coll_tuned_priority') };
  },
  init(comm, ctx) {
    const decisions = readDecisions(ctx.params);
    // Every member sees the same locality, so all take the same algorithms.
    const mostOnANode = Math.max(...comm.locality.nodes.map((ranks) => ranks.length));
    const crowded = mostOnANode >= decisions.crowdedRanks;
    ctx.verbose(
      20,
      `${comm.name}: tuned algorithms ${JSON.stringify(decisions.algorithm)} on ${comm.size} ` +
        `processes, up to ${mostOnANode} on a node${crowded ? ' (crowded: fewest messages)' : ''}`,
    );
    return actionsFor(comm.size, decisions, crowded);
  },
});

export default tuned;
