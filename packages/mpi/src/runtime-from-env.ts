import { ErrorClass, MpiError } from './errors';
import type { JobRuntime } from './job-runtime';
import { JOB_ENV } from './job-runtime';
import { HUB_ENV } from './launch/hub-protocol';

/**
 * The runtime a process started by a launcher uses, found from its environment:
 *
 * - `SSI_TEST_RENDEZVOUS` set: the test launcher of `@ssi/mpi/testing`.
 * - `SSI_JOB_HUB` set: started by `mpirun` through the lamds.
 */
export async function runtimeFromEnvironment(
  env: Record<string, string | undefined> = process.env,
): Promise<JobRuntime> {
  if (env[JOB_ENV.TEST_RENDEZVOUS]) {
    const { connectTestRuntime } = await import('./testing/test-runtime');
    return connectTestRuntime(env);
  }
  if (env[HUB_ENV.HUB]) {
    const { connectLamRuntime } = await import('./launch/lam-runtime');
    return connectLamRuntime(env);
  }
  throw new MpiError(
    ErrorClass.ERR_OTHER,
    `MPI.init: this process was not started by a launcher (${JOB_ENV.JOB_ID} and ` +
      `${JOB_ENV.RANK} are not set). Start MPI programs with mpirun, e.g. ` +
      `"mpirun -np 4 node app.js", or pass a JobRuntime to MPI.init({ runtime }).`,
  );
}
