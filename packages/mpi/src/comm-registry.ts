import type { Communicator } from './comm';

/**
 * The live communicators of one MPI instance, in creation order: COMM_WORLD, COMM_SELF and every
 * communicator the program built (dup, split, create, intercommunicators, merges) until it is
 * freed. Internal twins (a communicator's collective context, an intercommunicator's local
 * group) are not listed: they belong to their communicator. A checkpoint walks this list to reach
 * every communicator's coll modules (Ch. 7.2); tools may list it.
 */
export class CommRegistry {
  private readonly live = new Set<Communicator>();

  add(comm: Communicator): void {
    this.live.add(comm);
  }

  remove(comm: Communicator): void {
    this.live.delete(comm);
  }

  /** The live communicators, oldest first. */
  list(): Communicator[] {
    return [...this.live];
  }

  get size(): number {
    return this.live.size;
  }
}
