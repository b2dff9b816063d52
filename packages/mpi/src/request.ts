import type { Communicator } from './comm';
import { PROC_NULL, UNDEFINED } from './constants';
import { decodeValue } from './data';
import { ErrorClass, MpiError } from './errors';
import { nextTurn } from './progress/fast-yield';
import { ReqState, type RpiRequest } from './rpi/request';
import { Status, statusOf } from './status';

/** How one pass of a request is started; implemented by the communicator. */
export interface RequestOp {
  /** Starts the pass. Returns the internal request, or null when the pass completed at once. */
  launch(): RpiRequest | null;
  /** The status of a pass that completed at once (PROC_NULL, buffered sends). */
  immediateStatus(): Status;
  /** Whether completion yields a decoded value (receive without a buffer). */
  readonly object: boolean;
  /** Element size for counts of a receive into a buffer (0: the sender's). */
  readonly elementBytes: number;
  /** Frees the internal request for good. */
  destroy(req: RpiRequest): void;
  /**
   * Finishes a done pass before its status is taken (a derived-type receive unpacks here);
   * returns the pass's error (the request's own, or one of its own making).
   */
  complete?(req: RpiRequest): MpiError | null;
}

type Phase = 'inactive' | 'active' | 'complete' | 'freed';

/**
 * A non-blocking operation in progress (`MPI_Request`). `wait()` resolves when it is done, with
 * its `Status` (sends, receives into a buffer) or the received value (receives without a
 * buffer). After a successful `wait` or `test` a non-persistent request is inactive, as
 * MPI's request handle becomes `MPI_REQUEST_NULL`: the multiple-completion functions skip it,
 * and `wait()` returns its result again.
 */
export class Request<T = Status> {
  /** @internal */
  protected phase: Phase = 'inactive';
  /** @internal */
  protected rreq: RpiRequest | null = null;
  private value: T | undefined = undefined;
  private st: Status | undefined = undefined;
  private err: MpiError | null = null;
  private waiters: (() => void)[] | null = null;
  private orphan = false;

  /** @internal Use the communicator's `isend`, `irecv`, ... */
  constructor(
    /** @internal */
    protected readonly comm: Communicator,
    /** @internal */
    protected readonly call: string,
    /** @internal */
    protected readonly op: RequestOp,
    readonly persistent = false,
  ) {}

  /**
   * @internal Started while the entry gate is closed: active for the caller (test() says not
   * done, wait() waits) although the rpi sees it only when `begin` runs at the gate's reopening.
   */
  pend(): void {
    this.phase = 'active';
    this.comm.engineOf().crLog?.requestOpened();
  }

  /** @internal Starts one pass. */
  begin(): void {
    // Counted before the launch: a receive may complete inside it.
    if (this.phase !== 'active') this.comm.engineOf().crLog?.requestOpened();
    this.phase = 'active';
    this.value = undefined;
    this.st = undefined;
    this.err = null;
    let r: RpiRequest | null;
    try {
      r = this.op.launch();
    } catch (err) {
      this.phase = 'inactive';
      this.comm.engineOf().crLog?.requestClosed(); // counted as opened above
      throw err;
    }
    if (r === null) {
      this.finishImmediate();
      return;
    }
    this.rreq = r;
    r.onDone = (done) => this.onDone(done);
    r.owner = this;
    if (r.state === ReqState.DONE) this.onDone(r);
  }

  private finishImmediate(): void {
    this.st = this.op.immediateStatus();
    this.phase = 'complete';
    this.wake();
  }

  private onDone(r: RpiRequest): void {
    if (r.state !== ReqState.DONE || this.phase !== 'active') return;
    const st = statusOf(r, this.op.elementBytes);
    this.err = this.op.complete ? this.op.complete(r) : r.error;
    st.error = this.err;
    if (this.op.object && !r.error && !r.cancelled) {
      try {
        this.value = decodeValue(r.buf ?? new Uint8Array(0), r.stKind) as T;
      } catch (err) {
        this.err = st.error = err as MpiError;
      }
    }
    this.st = st;
    if (!this.persistent) {
      this.op.destroy(r);
      this.rreq = null;
    }
    this.phase = 'complete';
    if (this.orphan) {
      this.phase = 'freed';
      if (this.persistent && this.rreq) this.op.destroy(this.rreq);
      this.rreq = null;
    }
    this.wake();
  }

  private wake(): void {
    const w = this.waiters;
    if (w === null) return;
    this.waiters = null;
    for (const fn of w) fn();
  }

  /** @internal Registers a completion callback; returns a function that unregisters it. */
  onComplete(fn: () => void): () => void {
    if (this.phase !== 'active') {
      fn();
      return () => {};
    }
    // Someone waits for this request: the event loop polls meanwhile (mpi_base_poll_us).
    const engine = this.comm.engineOf();
    const req = this.rreq;
    const since = engine.waitBegins(req);
    let held = true;
    const letGo = () => {
      if (held) engine.waitEnds(since, req);
      held = false;
    };
    const waiter = () => {
      letGo();
      fn();
    };
    if (this.waiters === null) this.waiters = [];
    this.waiters.push(waiter);
    return () => {
      letGo();
      const i = this.waiters?.indexOf(waiter) ?? -1;
      if (i >= 0) this.waiters!.splice(i, 1);
    };
  }

  /** Started and not yet completed-and-consumed. */
  get active(): boolean {
    return this.phase === 'active' || this.phase === 'complete';
  }

  /** Completed (whether or not the completion has been consumed by wait/test). */
  get done(): boolean {
    return this.phase === 'complete' || (this.phase === 'inactive' && this.st !== undefined);
  }

  /** The status of the last completed pass (undefined before completion). */
  get status(): Status | undefined {
    return this.st;
  }

  /**
   * A completed pass seen by its owner (wait/test and the multiple completions): inactive again,
   * and no longer outstanding for the rollback log (else the rank is never quiet again).
   */
  private markSeen(): void {
    this.phase = 'inactive';
    this.comm.engineOf().crLog?.requestClosed();
  }

  /** @internal The value of the completed pass; throws its error through the error handler. */
  consume(): T {
    if (this.phase === 'complete') this.markSeen();
    if (this.err) throw this.comm.raiseSync(this.err, this.call);
    return (this.op.object ? this.value : this.st) as T;
  }

  /** @internal */
  consumeStatus(): { value: T; status: Status } {
    const value = this.consume();
    return { value, status: this.st ?? emptyStatus() };
  }

  /** Waits for completion (`MPI_Wait`): the status, or the received value for object receives. */
  wait(): Promise<T> {
    if (this.phase === 'freed') return Promise.reject(this.freedError('wait'));
    if (this.phase === 'active') Request.spinFor([this], () => this.phase !== 'active');
    if (this.phase !== 'active') {
      let value: T;
      try {
        value = this.st === undefined ? (emptyResult(this.op) as T) : this.consume();
      } catch (err) {
        return Promise.reject(err);
      }
      // Done already: every so often after one event-loop turn (a loop of isend + wait).
      if (this.comm.engineOf().fastYield.completedAtOnce()) return nextTurn().then(() => value);
      return Promise.resolve(value);
    }
    return new Promise<T>((resolve, reject) => {
      this.onComplete(() => {
        try {
          resolve(this.consume());
        } catch (err) {
          reject(err);
        }
      });
    });
  }

  /** Completes the request if it is done (`MPI_Test`): true when done. Throws its error. */
  test(): boolean {
    if (this.phase === 'freed') throw this.freedError('test');
    if (this.phase === 'active') this.comm.engineOf().syncPoll.pollNow();
    if (this.phase === 'active') return false;
    this.consume();
    return true;
  }

  /** The received value of a completed object receive (after `test()` returned true). */
  get result(): T | undefined {
    return (this.op.object ? this.value : this.st) as T | undefined;
  }

  /**
   * Asks for cancellation (`MPI_Cancel`): a receive not yet matched, or a send the receiver has
   * not matched, is taken back; `wait` then completes with `status.cancelled` true. Otherwise the
   * request completes normally.
   */
  cancel(): void {
    if (this.phase !== 'active') return;
    // Through the entry gate like every call: during a checkpoint the rpi must not be touched
    // (a cancel of a send writes to the peer); held, it is applied in call order at reopening,
    // after the start of a request that was itself held.
    this.comm.engineOf().gate.run(() => {
      if (this.phase === 'active' && this.rreq) this.comm.engineOf().cancel(this.rreq);
    });
  }

  /**
   * Releases the request (`MPI_Request_free`). An active operation still completes, but nobody
   * can wait for it any more.
   */
  free(): void {
    if (this.phase === 'active' || this.phase === 'complete') {
      this.comm.engineOf().crLog?.requestClosed();
    }
    if (this.phase === 'active') {
      this.orphan = true;
      return;
    }
    if (this.persistent && this.rreq) this.op.destroy(this.rreq);
    this.rreq = null;
    this.phase = 'freed';
  }

  /** The error of a call on a freed request, through the communicator's error handler. */
  private freedError(what: string): MpiError {
    return this.comm.raiseSync(
      new MpiError(ErrorClass.ERR_REQUEST, `${what} on a request that was freed`),
      what,
    );
  }

  /** @internal The call that made this request (`isend`, `recvInit`, ...), for error messages. */
  get callName(): string {
    return this.call;
  }

  // ---- multiple completions ---------------------------------------------------------------

  /** Waits for all (`MPI_Waitall`); rejects with ERR_IN_STATUS (and `errors`) if any failed. */
  static async waitall<T>(requests: readonly Request<T>[]): Promise<T[]> {
    Request.spinFor(requests, () => requests.every((r) => r.phase !== 'active'));
    await Promise.all(requests.map((r) => new Promise<void>((res) => r.onCompleteOrNow(res))));
    return Request.collectAll(requests, 'Request.waitall');
  }

  /** All done? Then their results (`MPI_Testall`), else undefined (and nothing is consumed). */
  static testall<T>(requests: readonly Request<T>[]): T[] | undefined {
    Request.pollFor(requests);
    if (requests.some((r) => r.phase === 'active')) return undefined;
    return Request.collectAll(requests, 'Request.testall');
  }

  private static collectAll<T>(requests: readonly Request<T>[], call: string): T[] {
    const errors = requests.map((r) => (r.phase === 'complete' ? r.err : null));
    const values = requests.map((r) => {
      if (r.phase === 'complete') r.markSeen();
      return (r.op.object ? r.value : (r.st ?? emptyResult(r.op))) as T;
    });
    const failed = errors.findIndex((e) => e !== null);
    if (failed >= 0) {
      const first = errors[failed]!;
      const err = new MpiError(
        ErrorClass.ERR_IN_STATUS,
        `${errors.filter(Boolean).length} of ${requests.length} requests failed; the first ` +
          `(index ${failed}): ${first.message}`,
      );
      err.errors = errors;
      throw requests[failed]!.comm.raiseSync(err, call);
    }
    return values;
  }

  /**
   * Waits for any one (`MPI_Waitany`): its index and result. Inactive requests are skipped; with
   * no active request the index is `UNDEFINED`.
   */
  static async waitany<T>(
    requests: readonly Request<T>[],
  ): Promise<{ index: number; value: T | undefined; status: Status }> {
    const now = Request.testany(requests);
    if (now) return now;
    await Request.anyCompletion(requests);
    return Request.testany(requests)!;
  }

  /** Any one done? (`MPI_Testany`): its index and result, or undefined when none is. */
  static testany<T>(
    requests: readonly Request<T>[],
  ): { index: number; value: T | undefined; status: Status } | undefined {
    Request.pollFor(requests);
    let anyActive = false;
    for (let i = 0; i < requests.length; i++) {
      const r = requests[i]!;
      if (r.phase === 'complete') {
        const { value, status } = r.consumeStatus();
        return { index: i, value, status };
      }
      if (r.phase === 'active') anyActive = true;
    }
    if (anyActive) return undefined;
    return { index: UNDEFINED, value: undefined, status: emptyStatus() };
  }

  /**
   * Waits until at least one is done (`MPI_Waitsome`): the indices of all that are, consumed.
   * Empty when no request is active.
   */
  static async waitsome<T>(requests: readonly Request<T>[]): Promise<number[]> {
    if (!requests.some((r) => r.phase === 'complete')) await Request.anyCompletion(requests);
    return Request.testsome(requests);
  }

  /** The indices of the requests that are done (`MPI_Testsome`), consumed. */
  static testsome<T>(requests: readonly Request<T>[]): number[] {
    Request.pollFor(requests);
    const out: number[] = [];
    const errors: (MpiError | null)[] = [];
    requests.forEach((r, i) => {
      if (r.phase === 'complete') {
        out.push(i);
        errors.push(r.err);
        r.markSeen();
      }
    });
    const failed = errors.findIndex(Boolean);
    if (failed >= 0) {
      const err = new MpiError(
        ErrorClass.ERR_IN_STATUS,
        `request ${out[failed]} failed: ${errors[failed]!.message}`,
      );
      err.errors = requests.map((_, i) => {
        const k = out.indexOf(i);
        return k >= 0 ? errors[k]! : null;
      });
      throw requests[out[failed]!]!.comm.raiseSync(err, 'Request.testsome');
    }
    return out;
  }

  /** Starts persistent requests (`MPI_Startall`), in order. */
  static startall(requests: readonly PersistentRequest<unknown>[]): void {
    for (const r of requests) r.start();
  }

  /** Resolves when any active request completes (at once when none is active). */
  private static anyCompletion(requests: readonly Request<unknown>[]): Promise<void> {
    const some = () => requests.some((r) => r.phase === 'complete');
    Request.spinFor(requests, some);
    if (some()) return Promise.resolve(); // the spin completed one: no waiter would see it
    return new Promise<void>((resolve) => {
      const offs: (() => void)[] = [];
      let fired = false;
      const fire = () => {
        if (fired) return;
        fired = true;
        for (const off of offs) off();
        resolve();
      };
      for (const r of requests) if (r.phase === 'active') offs.push(r.onComplete(fire));
      if (offs.length === 0) fire();
    });
  }

  /**
   * A polling rpi (shared memory) spins until `done()` before the caller waits for an event
   * (progress/sync-poll.ts); a no-op for an event-driven rpi or when nothing is active.
   */
  private static spinFor(requests: readonly Request<unknown>[], done: () => boolean): void {
    const active = requests.find((r) => r.phase === 'active');
    if (active) active.comm.engineOf().syncPoll.spinUntil(done);
  }

  /** A polling rpi takes what is there now before a test looks (`while (!req.test())` moves). */
  private static pollFor(requests: readonly Request<unknown>[]): void {
    const active = requests.find((r) => r.phase === 'active');
    if (active) active.comm.engineOf().syncPoll.pollNow();
  }

  private onCompleteOrNow(fn: () => void): void {
    if (this.phase === 'active') this.onComplete(fn);
    else fn();
  }
}

/**
 * A persistent request (`MPI_Send_init`, `MPI_Recv_init`, ...): built once, started many times
 * with `start()` / `Request.startall`. Between passes it is inactive; `free()` releases it.
 */
export class PersistentRequest<T = Status> extends Request<T> {
  /** Starts one pass (`MPI_Start`). Starting an active request is an ERR_REQUEST error. */
  start(): void {
    if (this.phase === 'active' || this.phase === 'complete') {
      throw this.comm.raiseSync(
        new MpiError(
          ErrorClass.ERR_REQUEST,
          'start of a persistent request that is still active; wait for it (or test it) first',
        ),
        `${this.call}.start`,
      );
    }
    if (this.phase === 'freed') {
      throw this.comm.raiseSync(
        new MpiError(ErrorClass.ERR_REQUEST, 'start of a persistent request that was freed'),
        `${this.call}.start`,
      );
    }
    this.comm.startPersistent(this);
  }
}

function emptyStatus(): Status {
  const st = new Status();
  st.source = PROC_NULL;
  return st;
}

function emptyResult(op: RequestOp): unknown {
  return op.object ? undefined : emptyStatus();
}
