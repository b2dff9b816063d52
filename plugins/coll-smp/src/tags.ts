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
  /** On a node's communicator: a piece of the result is in the shared area (`area-flow.ts`). */
  AREA_READY: 204,
  /** On a node's communicator: a rank is done with the slot of a piece (it may be overwritten). */
  AREA_DONE: 205,
  /** On a node's communicator: a rank's operand piece is in its slot (reductions). */
  AREA_IN: 206,
  /** On the leaders' communicator: recursive doubling's exchange (`leaders-allreduce.ts`). */
  LEADERS_EXCHANGE: 207,
  /** A reduction's length exchange: a rank's part to the node's leader (`reduction-exchange.ts`). */
  SMALL_IN: 208,
  /** A reduction's length exchange: the result from the node's leader. */
  SMALL_OUT: 209,
  /** On the leaders' communicator: a partial result up the reduce tree (`leaders-reduce.ts`). */
  LEADERS_REDUCE: 210,
  /** barrier: a pairwise exchange step (`barrier.ts`), on the parent's or the leaders' channel. */
  BARRIER_PAIR: 211,
  /**
   * bcast: the root's length (and, below `coll_smp_shm_min_bytes`, its data) down the leaders'
   * tree and to each node's ranks (`bcast-header.ts`).
   */
  BCAST_HEADER: 212,
  /**
   * bcast: a piece of the data down the leaders' tree, into the next node's area, more to follow
   * (`bcast-area.ts`); BCAST_LAST: the call's last piece.
   */
  BCAST_PIECE: 213,
  BCAST_LAST: 215,
  /**
   * bcast through the areas: the root's whole buffer (below `coll_smp_shm_min_bytes`), down the
   * leaders' tree and from each node's writer to its other ranks (`bcast-area.ts`).
   */
  BCAST_SMALL: 218,
  /**
   * bcast, striped (`bcast-striped.ts`): the root's length down the leaders' tree and from each
   * other node's leader to its ranks; BCAST_STRIPE_DATA: a stripe from node rank j to node rank
   * j of a node below, on the flat duplicate's channel.
   */
  BCAST_STRIPE: 219,
  BCAST_STRIPE_DATA: 220,
  /** A reduction's length exchange: recursive doubling (`lengths-exchange.ts`), on any channel. */
  LENGTHS_PAIR: 214,
  /**
   * reduce: a rank's length (and, below `coll_smp_shm_min_bytes`, its operand) to its node's
   * leader, and the root's node leader's verdict (and small result) to a root that is not the
   * leader (`reduce-up.ts`), on the parent's channel.
   */
  REDUCE_UP: 216,
  /** reduce: a leader's subtree lengths (and small partial) up the leaders' tree (`reduce-up.ts`). */
  LEADERS_UP: 217,
} as const;
