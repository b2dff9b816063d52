export type { Ran } from '@ssi/cli/testing';
export { cliBin, envOf, runCli, waitFor } from '@ssi/cli/testing';
export { jobsProgram as MPI_JOB } from '@ssi/mpi/testing';
