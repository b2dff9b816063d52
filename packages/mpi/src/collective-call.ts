import { CollectiveDeadline } from './collective-deadline';
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
  /** Operations called and not yet settled (the one running and those queued behind it). */
  private running = 0;
  private readonly deadline = new CollectiveDeadline();
  private timeoutSeconds: number | undefined;
  /** Why collectives on this communicator cannot go on (a timed-out one), if so. */
  private broken: string | undefined;

  constructor(private readonly comm: Communicator) {}

  run<T>(call: string, body: () => Promise<T>): Promise<T> {
    // Nothing before it (the usual case): it starts now, without waiting for a reaction. Counted
    // first, so that a call its synchronous start makes queues behind it.
    const idle = this.running === 0;
    this.running++;
    const result = idle ? this.startNow(call, body) : this.afterTail(call, body);
    this.tail = result.then(this.settled, this.settled);
    return result;
  }

  /**
   * Runs a collective operation at once: one that a coll module calls on the communicator it
   * serves, inside the operation that invoked the module (an `init` building sub-communicators,
   * an allreduce made of a reduce and a bcast). Queued behind its caller it would wait forever;
   * the caller's coll_base_timeout bounds it.
   */
  runNested<T>(call: string, body: () => Promise<T>): Promise<T> {
    return this.guarded(call, body, false);
  }

  /**
   * `guarded(call, body, true)` for a call with nothing before it, in one promise where the gate
   * is free (no checkpoint in progress, no module counting calls) and a timeout is set: `body`'s
   * result bounded by coll_base_timeout, its errors through the handler (`raise`). The async
   * `guarded` awaiting `bounded` was one more promise and reaction on every collective.
   */
  private startNow<T>(call: string, body: () => Promise<T>): Promise<T> {
    const comm = this.comm;
    this.timeoutSeconds ??= comm.host.params.get<number>('coll_base_timeout');
    const seconds = this.timeoutSeconds;
    if (comm.freed || this.broken || !comm.host.engine.gate.free || seconds <= 0) {
      return this.guarded(call, body, true);
    }
    // What the call rejects with: the handler's error, or what the handler threw (as `guarded`).
    const raise = (err: unknown): unknown => {
      try {
        return comm.raiseSync(err, call);
      } catch (thrown) {
        return thrown;
      }
    };
    let work: Promise<T>;
    try {
      work = body();
    } catch (err) {
      return Promise.reject(raise(err));
    }
    return this.deadline.bound(work, seconds * 1000, () => this.expired(call, seconds), raise);
  }

  /** A collective ran past coll_base_timeout: the communicator is unusable for collectives. */
  private expired(call: string, seconds: number): CollTimeout {
    this.broken = `${call} timed out`;
    return collTimeout(call, this.comm.name, seconds);
  }

  private afterTail<T>(call: string, body: () => Promise<T>): Promise<T> {
    const start = () => this.guarded(call, body, true);
    return this.tail.then(start, start);
  }

  private readonly settled = (): void => {
    this.running--;
  };

  private async guarded<T>(call: string, body: () => Promise<T>, bound: boolean): Promise<T> {
    const comm = this.comm;
    try {
      if (comm.freed)
        throw new MpiError(ErrorClass.ERR_COMM, `${call}: ${comm.name} has been freed`);
      if (this.broken) {
        throw new MpiError(
          ErrorClass.ERR_COMM,
          `${call}: ${comm.name} cannot be used for collectives any more: ${this.broken}`,
        );
      }
      const gate = comm.host.engine.gate;
      return await gate.call(bound ? () => this.bounded(call, body) : body);
    } catch (err) {
      throw comm.raiseSync(err, call);
    }
  }

  /**
   * `body` bounded by coll_base_timeout. Not async: an await here was one more promise hop on
   * every collective (a small one is a few of them plus its message latencies); a synchronous
   * throw of `body` still becomes the caller's rejection in `guarded`.
   */
  private bounded<T>(call: string, body: () => Promise<T>): Promise<T> {
    // Read once: parameters do not change while the process runs, and a lookup reads
    // process.env (several µs, a tenth of a small collective's own cost).
    this.timeoutSeconds ??= this.comm.host.params.get<number>('coll_base_timeout');
    const seconds = this.timeoutSeconds;
    if (seconds <= 0) return body();
    return this.deadline.bound(body(), seconds * 1000, () => this.expired(call, seconds));
  }
}

/**
 * `comm` as its coll modules see it: the same communicator (every property and method reads and
 * writes `comm`), except that the collectives called on it run at once through
 * `sequence.runNested` instead of queuing behind the operation that invoked the module. A module
 * only ever touches its communicator from inside a collective operation on it (`query`, `init`,
 * an action, `finalize`), so every call through this view is nested in one.
 *
 * A view instead of an async-context marker: AsyncLocalStorage would turn on promise hooks for
 * every promise of the process from the first collective on, which costs each message.
 */
export function insideCollectiveView(
  comm: Communicator,
  sequence: CollectiveSequence,
  sequenceKey: string,
): Communicator {
  const nested: Pick<CollectiveSequence, 'run'> = {
    run: (call, body) => sequence.runNested(call, body),
  };
  return new Proxy(comm, {
    // `coll` (what a module moves its data with, read several times per call) straight from
    // the communicator: its getter run on the view trapped every property it reads (3 traps a
    // read, 2-3 % of a small allreduce's profile); it is the collective twin either way.
    get: (target, prop, receiver) =>
      prop === 'coll'
        ? target.coll
        : prop === sequenceKey
          ? nested
          : Reflect.get(target, prop, receiver),
  });
}
