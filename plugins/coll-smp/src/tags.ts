/**
 * Point-to-point tags smp uses on its parent communicator's collective context. Above lam_basic's
 * (1-23) and tuned's (101-110), so smp's messages never match theirs when collectives of several
 * modules run back to back on one communicator.
 */
export const Tag = {
  /** reduce: the root's node leader hands the result to the root. */
  REDUCE_RESULT: 201,
  /** barrier: a rank tells its leader it arrived. */
  BARRIER_IN: 202,
  /** barrier: the leader releases its node. */
  BARRIER_OUT: 203,
} as const;
