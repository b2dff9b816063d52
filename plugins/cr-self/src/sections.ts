import { basename } from 'node:path';

/** The section of a rank file that holds the MPI layer's image. */
export const MPI_SECTION = 'mpi';

/** The series number of a `series-<n>` directory, or a clear error. */
export function seriesOfDir(seriesDir: string): number {
  const m = /^series-(\d+)$/.exec(basename(seriesDir));
  if (!m) {
    throw new Error(
      `${seriesDir} is not a series directory of a checkpoint (expected .../series-<n>); restart with lamrestart <checkpoint dir>`,
    );
  }
  return Number(m[1]);
}
