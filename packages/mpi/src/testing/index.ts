/**
 * @ssi/mpi/testing: run MPI programs in tests before mpirun exists, and the conformance suite
 * every rpi module's tests run (Ch. 5.3.1).
 */
import { fileURLToPath } from 'node:url';

export { CONFORMANCE_CASES } from './cases';
export type { JobResult, LaunchOptions } from './launcher';
export { killAllJobs, launchJob, runJob } from './launcher';
export { connectTestRuntime } from './test-runtime';

/** Path of the conformance program: `node conformance.js <case> [<case> ...]`. */
export const conformanceProgram: string = fileURLToPath(
  new URL('./conformance.js', import.meta.url),
);
