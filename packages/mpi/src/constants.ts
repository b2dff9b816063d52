/**
 * The constants of the MPI standard that point-to-point code uses. Values follow LAM/MPI where it
 * matters (negative wildcards, so that every valid rank and tag is >= 0).
 */

/** Receive from any source (`MPI_ANY_SOURCE`). */
export const ANY_SOURCE = -1;
/** Receive any tag >= 0 (`MPI_ANY_TAG`). */
export const ANY_TAG = -1;
/** The null process: sends to it and receives from it complete at once (`MPI_PROC_NULL`). */
export const PROC_NULL = -2;
/** "No value", e.g. a count that is not a whole number of elements (`MPI_UNDEFINED`). */
export const UNDEFINED = -32766;

/** Thread support levels (`MPI_THREAD_*`), lowest first. */
export const THREAD_SINGLE = 0;
export const THREAD_FUNNELED = 1;
export const THREAD_SERIALIZED = 2;
export const THREAD_MULTIPLE = 3;

export type ThreadLevel = 0 | 1 | 2 | 3;

/** Bytes to add per buffered message when sizing an attached buffer (`MPI_BSEND_OVERHEAD`). */
export const BSEND_OVERHEAD = 64;

/** The largest tag the MPI layer accepts before the rpi module lowers it (`MPI_TAG_UB`). */
export const DEFAULT_MAX_TAG = 0x7fffffff;
/** The largest context id the MPI layer hands out before the rpi module lowers it. */
export const DEFAULT_MAX_CID = 0x7fffffff;

/** Context ids of the predefined communicators. */
export const CID_WORLD = 0;
export const CID_SELF = 1;
/** Set in the context id of a communicator's collective twin (`comm.coll`); never in a user cid. */
export const COLL_CID_BIT = 0x40000000;
/** Set in the context id of an intercommunicator's local-group twin (`comm.local`). */
export const LOCAL_CID_BIT = 0x20000000;

/** Results of group and communicator comparison (`MPI_IDENT`, ...). */
export const IDENT = 0;
export const CONGRUENT = 1;
export const SIMILAR = 2;
export const UNEQUAL = 3;
export type Comparison = typeof IDENT | typeof CONGRUENT | typeof SIMILAR | typeof UNEQUAL;

/** The root of an intercommunicator collective, in the root process (`MPI_ROOT`). */
export const ROOT = -3;
