/**
 * @ssi/mpi/testing: run MPI programs in tests before mpirun exists, and the conformance suite
 * every rpi module's tests run (Ch. 5.3.1), and an in-process fake world coll modules' algorithms
 * are unit-tested on (`onEveryRank`, `onEveryInterProcess`).
 */
import { fileURLToPath } from 'node:url';

export { CONFORMANCE_CASES, conformanceCasesFor } from './cases';
export type { Side } from './fake-world';
export { Endpoint, FakeComm, intraWorld, onEveryInterProcess, onEveryRank } from './fake-world';
export type { JobResult, LaunchOptions } from './launcher';
export { explainJob, killAllJobs, launchJob, runJob } from './launcher';
export { connectTestRuntime } from './test-runtime';

/**
 * Path of the collectives program (Ch. 6.3.1): `node collectives.js <case> [<case> ...]`, cases
 * in `COLLECTIVE_CASES`.
 */
export const collectivesProgram: string = fileURLToPath(
  new URL('./collectives.js', import.meta.url),
);

/** The cases of the collectives program, in the order a full run takes them. */
export const COLLECTIVE_CASES = [
  'barrier',
  'bcast',
  'gather',
  'gatherv',
  'scatter',
  'allgather',
  'alltoall',
  'reduce',
  'scan',
  'comms',
  'intercomm',
  'bad-input',
] as const;

/**
 * Path of the small jobs launchers and boot modules are tested with: `node jobs.js <mode> [arg]`
 * (ring, env, touch, fail, abort, no-finalize, control, wait; see jobs.ts).
 */
export const jobsProgram: string = fileURLToPath(new URL('./jobs.js', import.meta.url));

/** Path of the conformance program: `node conformance.js <case> [<case> ...]`. */
export const conformanceProgram: string = fileURLToPath(
  new URL('./conformance.js', import.meta.url),
);

/** Path of the datatype suite: `node datatypes.js <case> [<case> ...]`, cases in `DATATYPE_CASES`. */
export const datatypesProgram: string = fileURLToPath(new URL('./datatypes.js', import.meta.url));

/** The cases of the datatype suite, in the order a full run takes them. */
export const DATATYPE_CASES = [
  'constructors',
  'interop',
  'modes',
  'large',
  'edges',
  'collectives',
] as const;

/** Path of the topology program: `node topology.js` (every topology call on COMM_WORLD). */
export const topologyProgram: string = fileURLToPath(new URL('./topology.js', import.meta.url));
