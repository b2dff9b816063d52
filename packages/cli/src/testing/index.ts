/**
 * `@ssi/cli/testing`: for tests that run the commands as a user would (boot modules, launchers):
 * start a built command, collect its output with a deadline, poll for what it does.
 */
export type { CliOptions, Ran } from './cli-process';
export { cliBin, runCli, startCli, waitChild } from './cli-process';
export { envOf } from './proc-env';
export { waitFor } from './wait-for';
