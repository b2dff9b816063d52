import { performance } from 'node:perf_hooks';

/**
 * Elapsed wall-clock time in seconds since an arbitrary point in the past (`MPI_Wtime`),
 * monotonic, not synchronized between processes (`MPI_WTIME_IS_GLOBAL` is false).
 */
export function wtime(): number {
  return performance.now() / 1000;
}

/** Resolution of `wtime` in seconds (`MPI_Wtick`): the nanosecond clock under performance.now(). */
export function wtick(): number {
  return 1e-9;
}
