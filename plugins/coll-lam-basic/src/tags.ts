/**
 * Point-to-point tags of the collectives, on the communicator's collective context (LAM's
 * BLKMPI* constants). Each collective has its own, and so does each phase in which one pair of
 * processes exchanges more than one kind of message: a message of one collective or phase can
 * never match a receive of another, even when collectives follow each other back to back.
 */
export const Tag = {
  BARRIER: 1,
  BCAST: 2,
  GATHER: 3,
  GATHERV: 4,
  SCATTER: 5,
  SCATTERV: 6,
  ALLTOALL: 7,
  ALLTOALLV: 8,
  ALLTOALLW: 9,
  REDUCE: 10,
  REDUCE_SCATTER: 11,
  SCAN: 12,
  EXSCAN: 13,
  BARRIER_INTER: 14,
  BARRIER_INTER_SWAP: 15,
  BARRIER_INTER_RELEASE: 16,
  BCAST_INTER: 17,
  ALLREDUCE_INTER: 18,
  ALLREDUCE_INTER_SWAP: 19,
  ALLREDUCE_INTER_RESULT: 20,
  ALLGATHER_INTER: 21,
  ALLGATHER_INTER_SWAP: 22,
  ALLGATHER_INTER_RESULT: 23,
} as const;
