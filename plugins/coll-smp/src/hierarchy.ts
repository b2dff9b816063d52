import type { CollComm, CollLocality } from '@ssi/mpi';
import { ERRORS_RETURN, UNDEFINED } from '@ssi/mpi';
import { crowdedNodes } from './crowding';
import { FLAT_MARK } from './eligibility';

/**
 * What smp builds for one communicator in `init` (Ch. 6.2.2, App. D.2.2), through the public
 * communicator calls so each part gets its own coll selection: the ranks of this process's node,
 * the node leaders (null on other ranks), and a flat duplicate of the whole communicator that smp
 * declines, so that lam_basic (or whatever the selector allows next) serves it: the per-call
 * fallback for reductions whose operand order matters and for buffers below the thresholds.
 */
export interface Hierarchy {
  /** Node locality of the parent, read once (it never changes while the communicator lives). */
  readonly loc: CollLocality;
  /** This node's ranks, in parent rank order (local rank 0 is the leader). */
  readonly local: CollComm;
  /** One rank per node, nodes in `loc.nodes` order (so node i is leader rank i); null off-leader. */
  readonly leaders: CollComm | null;
  /** The whole communicator, served without smp. */
  readonly flat: CollComm;
  /** Some node has fewer CPUs than ranks (`crowding.ts`): small collectives take the levels. */
  readonly crowded: boolean;
}

/**
 * Errors inside a sub-communicator must reach the caller of the parent's collective, which
 * applies the parent's error handler; a sub-communicator's own fatal default would abort the job
 * even where the user asked for ERRORS_RETURN on the parent. `CollComm` does not list
 * `errhandler` (the MPI layer's `Communicator` has it), so it is set only where present.
 */
function returnErrors(comm: CollComm): void {
  if ('errhandler' in comm) (comm as { errhandler: unknown }).errhandler = ERRORS_RETURN;
}

/** Builds the hierarchy of `comm` (collective over `comm`; every member calls it). */
export async function buildHierarchy(comm: CollComm): Promise<Hierarchy> {
  const loc = comm.locality;
  // Key = parent rank: local and leader ranks keep the parent's order, so node i's leader is
  // rank i of `leaders` and a local reduction still combines in rank order within the node.
  const local = await comm.split(loc.node, comm.rank, `${comm.name} [smp node ${loc.node}]`);
  const leaders = await comm.split(
    loc.isLeader ? 0 : UNDEFINED,
    comm.rank,
    `${comm.name} [smp leaders]`,
  );
  const flat = await comm.dup(`${comm.name}${FLAT_MARK}`);
  if (!local) throw new Error(`smp: ${comm.name}: split by node gave this rank no communicator`);
  for (const sub of [local, leaders, flat]) if (sub) returnErrors(sub);
  return { loc, local, leaders, flat, crowded: await crowdedNodes(local, flat) };
}

/** Frees what `buildHierarchy` made (collective, from the parent's free). */
export async function freeHierarchy(h: Hierarchy): Promise<void> {
  await h.flat.free();
  await h.leaders?.free();
  await h.local.free();
}
