/**
 * `@ssi/cli/testing`: for tests that run the commands as a user would (boot modules, launchers):
 * start a built command, collect its output with a deadline, poll for what it does; a job of
 * mpirun to checkpoint and restart; a universe booted over real test hosts (@ssi/testbed).
 */
export type { CliOptions, Ran } from './cli-process';
export { cliBin, runCli, startCli, waitChild } from './cli-process';
export { envOf } from './proc-env';
export { jobDir, lamcheckpoint, lamrestart, RunningJob, startJob } from './running-job';
export type { TestbedUniverse, TestbedUniverseOptions } from './testbed-universe';
export { bootTestbedUniverse } from './testbed-universe';
export { waitFor } from './wait-for';
