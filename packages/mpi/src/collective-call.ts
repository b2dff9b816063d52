import { AsyncLocalStorage } from 'node:async_hooks';
import { withDeadline } from '@ssi/lam';
import type { Communicator } from './comm';
import { ErrorClass, MpiError } from './errors';

/** Rejects with ERR_OTHER when a collective takes longer than coll_base_timeout. */
class CollTimeout extends MpiError {}

function collTimeout(call: string, comm: string, seconds: number): CollTimeout {
  return new CollTimeout(
    ErrorClass.ERR_OTHER,
    `${call} on ${comm}: the other members did not take part within ${seconds} s ` +
      '(coll_base_timeout); did every member call the same collectives in the same order, with ' +
      'matching arguments?',
  );
}

/** The communicators whose collective operation the current async context runs inside. */
const collectiveScope = new AsyncLocalStorage<ReadonlySet<Communicator>>();

const RESOLVED: Promise<void> = Promise.resolve();

/**
 * The order of one communicator's collective operations (collectives and constructors): each
 * runs after the ones called before it (calls started without awaiting the previous one would
 * otherwise mix up their messages), enters through the entry gate, is bounded by
 * coll_base_timeout, and has the error handler applied. A collective that timed out leaves
 * messages the others may still send: the communicator is then unusable for collectives, and
 * says so.
 */
export class CollectiveSequence {
  private tail: Promise<void> = RESOLVED;
  /** Why collectives on this communicator cannot go on (a timed-out one), if so. */
  private broken: string | undefined;

  constructor(private readonly comm: Communicator) {}

  run<T>(call: string, body: () => Promise<T>): Promise<T> {
    const comm = this.comm;
    const guarded = async (): Promise<T> => {
      try {
        if (comm.freed)
          throw new MpiError(ErrorClass.ERR_COMM, `${call}: ${comm.name} has been freed`);
        if (this.broken) {
          throw new MpiError(
            ErrorClass.ERR_COMM,
            `${call}: ${comm.name} cannot be used for collectives any more: ${this.broken}`,
          );
        }
        return await comm.host.engine.gate.call(() => this.bounded(call, body));
      } catch (err) {
        throw comm.raiseSync(err, call);
      }
    };
    // A collective operation started from inside one on this communicator (a coll module's
    // init building sub-communicators, a module calling another collective) runs at once.
    const inside = collectiveScope.getStore();
    if (inside?.has(comm)) return guarded();
    const scope = new Set(inside ?? []).add(comm);
    const inScope = () => collectiveScope.run(scope, guarded);
    const result = this.tail.then(inScope, inScope);
    this.tail = result.then(
      () => {},
      () => {},
    );
    return result;
  }

  private async bounded<T>(call: string, body: () => Promise<T>): Promise<T> {
    const seconds = this.comm.host.params.get<number>('coll_base_timeout');
    if (seconds <= 0) return body();
    try {
      return await withDeadline(body(), seconds * 1000, () =>
        collTimeout(call, this.comm.name, seconds),
      );
    } catch (err) {
      if (err instanceof CollTimeout) this.broken = `${call} timed out`;
      throw err;
    }
  }
}
