/**
 * Point-to-point tags of the tuned algorithms on the collective context. They start above
 * lam_basic's (1-23) so that a tuned collective and a lam_basic one called back to back on the
 * same communicator never take each other's messages; each phase in which one pair of processes
 * exchanges more than one kind of message has its own.
 */
export const Tag = {
  BARRIER: 101,
  BCAST: 102,
  BCAST_SCATTER: 103,
  BCAST_ALLGATHER: 104,
  REDUCE: 105,
  ALLREDUCE: 106,
  ALLREDUCE_SCATTER: 107,
  ALLREDUCE_GATHER: 108,
  ALLGATHER: 109,
  ALLTOALL: 110,
  REDUCE_SCATTER: 111,
  SCAN: 112,
  EXSCAN: 113,
  BARRIER_RELEASE: 114,
} as const;
