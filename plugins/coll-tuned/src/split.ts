import type { ReduceOp } from '@ssi/mpi';
import { BUILTIN_OPS, MAXLOC, MINLOC } from '@ssi/mpi';

const BUILTIN: ReadonlySet<ReduceOp> = new Set(Object.values(BUILTIN_OPS));

/**
 * The smallest run of elements a vector may be cut at for `op`, or 0 when it must travel whole.
 * Rabenseifner and the ring reduce pieces of the vector; that is right only where the operator
 * works element by element on the pieces. The built-in operators do (MAXLOC / MINLOC on
 * (value, index) pairs: cut between pairs). A user-defined operator may combine neighbouring
 * elements (MPI would know its datatype; we do not), so it gets algorithms that keep vectors
 * whole (recursive doubling).
 */
export function splitUnit(op: ReduceOp): number {
  if (!BUILTIN.has(op)) return 0;
  return op === MAXLOC || op === MINLOC ? 2 : 1;
}
