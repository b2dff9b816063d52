import { defineModule } from '@ssi/core';
import type { CollComm, CollModule } from '@ssi/mpi';
import { actionsFor } from './actions';
import { closeArea } from './area-use';
import { declineReason } from './eligibility';
import { buildHierarchy, freeHierarchy, type Hierarchy } from './hierarchy';
import { readSmpSettings, SMP_PARAMS } from './params';

/** Each served communicator's sub-communicators, freed with it. */
const hierarchies = new WeakMap<CollComm, Hierarchy>();

/**
 * The smp coll module (Ch. 6.2.2): MagPIe's hierarchical bcast, barrier, reduce and allreduce on
 * communicators that span nodes with several ranks on some node; lam_basic does the rest.
 */
const smp: CollModule = defineModule<CollModule>({
  ssiApi: '1.0.0',
  type: 'coll',
  // A literal, equal to the manifest's: 1.2 is the first coll API with `CollComm.locality`.
  typeApi: '1.2.0',
  name: 'smp',
  version: '1.0.0',
  hasCheckpoint: true,
  params: SMP_PARAMS,
  query(comm, ctx) {
    const reason = declineReason(comm);
    if (reason) return reason;
    return { priority: ctx.params.get<number>('coll_smp_priority') };
  },
  async init(comm, ctx) {
    // Parameters first: a bad value fails before any sub-communicator exists.
    const settings = readSmpSettings(ctx.params);
    const h = await buildHierarchy(comm);
    hierarchies.set(comm, h);
    ctx.verbose(
      20,
      `${comm.name}: smp hierarchy: nodes ${JSON.stringify(h.loc.nodes)}, rank ${comm.rank} on ` +
        `node ${h.loc.node}${h.loc.isLeader ? ' (leader)' : ''}` +
        (h.crowded ? '; a node has fewer CPUs than ranks: small collectives by the levels' : ''),
    );
    return actionsFor(h, settings, (message) => ctx.verbose(10, `${comm.name}: ${message}`));
  },
  async finalize(comm) {
    const h = hierarchies.get(comm);
    if (!h) return;
    hierarchies.delete(comm);
    closeArea(h);
    await freeHierarchy(h);
  },
});

export default smp;
