import type { Communicator } from './comm';
import type { MpiError } from './errors';

/**
 * What a communicator does with an error (`MPI_Errhandler`). The two predefined handlers:
 *
 * - `ERRORS_ARE_FATAL` (the default of every communicator): the whole job is aborted with a
 *   message naming the rank, the communicator, the call and the error.
 * - `ERRORS_RETURN`: the call throws (or its promise rejects with) the `MpiError`.
 *
 * A handler made with `Errhandler.create(fn)` runs `fn(comm, error)`; if `fn` returns, the call
 * throws the error as with `ERRORS_RETURN`.
 */
export class Errhandler {
  private constructor(
    readonly name: string,
    readonly fn: ((comm: Communicator, error: MpiError) => void) | null,
  ) {}

  static create(fn: (comm: Communicator, error: MpiError) => void, name = 'user'): Errhandler {
    return new Errhandler(name, fn);
  }

  static readonly ERRORS_ARE_FATAL = new Errhandler('ERRORS_ARE_FATAL', null);
  static readonly ERRORS_RETURN = new Errhandler('ERRORS_RETURN', null);
}

export const ERRORS_ARE_FATAL = Errhandler.ERRORS_ARE_FATAL;
export const ERRORS_RETURN = Errhandler.ERRORS_RETURN;
