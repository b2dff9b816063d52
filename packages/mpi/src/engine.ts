import type { ParamRegistry, VerboseStream } from '@ssi/core';
import { schedAvailable, schedYield } from '@ssi/sched';
import type { RestartPlan } from './cr/image';
import { RestartReplay } from './cr/restart-replay';
import type { RollbackLog } from './cr/rollback-log';
import { RpiQuartet } from './cr/rpi-quartet';
import { DataKind } from './data';
import { ErrorClass, MpiError } from './errors';
import { EntryGate } from './gate';
import { keepAlive } from './keep-alive';
import { matchStatus } from './matching/delivery';
import type { MessageHeader } from './matching/header';
import { Matcher, tagMatches } from './matching/matcher';
import { SelfChannel } from './matching/self-channel';
import type { UnexpectedMessage } from './matching/unexpected';
import type { Proc } from './proc';
import { ProcMode } from './proc';
import { FastYield, nextTurn } from './progress/fast-yield';
import { choosePolling, cpuPool, machineNow, type PollChoice } from './progress/poll-policy';
import { RunDelay } from './progress/run-delay';
import { SyncPoll } from './progress/sync-poll';
import { WaitPoller } from './progress/wait-poller';
import { FastRecv, type FastRecvResult } from './rpi/fast-recv';
import { ReqFlag, ReqState, ReqType, RpiRequest } from './rpi/request';
import type { RpiActions, RpiHost, RpiModule, RpiRuntime } from './rpi/types';

const POOL_MAX = 64;
/** Sends to self up to this many bytes are copied and complete at once; longer ones wait. */
const SELF_EAGER_LIMIT = 64 * 1024;
/** A matched message this long takes a while to arrive: the polling covers it (`extend`). */
const LONG_TRANSFER = 16 * 1024;

/** Bytes of a send: its buffer's, or the total of its gather ranges. */
function sendBytes(req: RpiRequest): number {
  return req.gather === null ? (req.buf?.byteLength ?? 0) : req.gatherLength;
}

/**
 * The bytes a wait for `req` may move: a send's, or what a receive's buffer (or layout) holds —
 * a receive into a long buffer expects a long message, and in a ping-pong its reply comes only
 * after the peer received the message before it (0 for a receive of any value, no buffer).
 */
function waitBytes(req: RpiRequest): number {
  if (req.type !== ReqType.RECV) return sendBytes(req);
  return req.buf?.byteLength ?? req.scatter?.length ?? 0;
}

/**
 * The progression engine of the MPI layer: the active request list (Ch. 5.1.2), the request
 * life cycle around the selected rpi module (build → start → done → destroy, Fig. 5.2), message
 * matching (posted receives, unexpected messages, sends to self: the MPI layer's, not the rpi's),
 * the entry gate, and the module's checkpoint quartet (`quartet`). It is the `RpiHost` the module
 * is given.
 */
export class Engine implements RpiHost {
  actions!: RpiActions;
  moduleName = '';
  /** Every MPI call enters through the gate (held while a checkpoint is in progress). */
  readonly gate = new EntryGate();
  /** The selected module's checkpoint/restart quartet, around the gate. */
  readonly quartet = new RpiQuartet(this.gate, this);
  /** Whether blocking sends may use the rpi's fastsend. */
  fast = true;
  /** Set at the start of finalize: lost connections are expected from then on. */
  finalizing = false;
  /** Kept while a cr module is selected: what a restart would have to do again. */
  crLog: RollbackLog | null = null;
  /** After a restart: sends the receivers already consumed complete without being sent again. */
  private redo: RestartReplay | null = null;

  private aHead: RpiRequest | null = null;
  private aTail: RpiRequest | null = null;
  /** Number of requests on the active list. */
  activeCount = 0;
  private nextId = 0;
  private readonly pool: RpiRequest[] = [];
  private probeWaiters: (() => void)[] = [];
  /** Unexpected messages queued so far (a blocking probe spins until it changes). */
  private arrivals = 0;
  private polling = false;
  /** Posted receives and unexpected messages of every path the rpi drives. */
  readonly matcher = new Matcher(() => this.arrived());
  private readonly self: SelfChannel;
  /** `RpiHost.openModule`, provided by the MPI instance (it owns the rpi framework). */
  openModule: (name: string) => Promise<RpiModule> = (name) =>
    Promise.reject(new MpiError(ErrorClass.ERR_OTHER, `no rpi framework to open "${name}" from`));
  /** Called when a peer is lost outside finalize (the MPI layer applies the error handler). */
  onPeerFailed: (proc: Proc, error: MpiError) => void = () => {};
  /** Polls the event loop while an MPI call waits (mpi_base_poll_us; issue 18). */
  readonly poller: WaitPoller;
  /** What was chosen for polling here, and why (verbose output); re-chosen now and then. */
  pollChoice: PollChoice;
  /** Yields to the event loop in a run of calls that complete at once (mpi_base_yield_every). */
  readonly fastYield: FastYield;
  /** Synchronous spinning and polling of a `polling` rpi module (issue 15). */
  readonly syncPoll = new SyncPoll(() => this.actions);

  constructor(
    readonly procs: Proc[],
    readonly myProc: Proc,
    readonly runtime: RpiRuntime,
    readonly params: ParamRegistry,
    private readonly verboseStream: VerboseStream,
  ) {
    this.self = new SelfChannel(this.matcher, myProc, (r) => this.complete(r), SELF_EAGER_LIMIT);
    const node = myProc.gps.node;
    const inputs = {
      requestedUs: params.get<number>('mpi_base_poll_us'),
      explicit: params.lookup('mpi_base_poll_us').source !== 'default',
      oversubscribedUs: params.get<number>('mpi_base_poll_oversubscribed_us'),
      oversubscribedExplicit: params.lookup('mpi_base_poll_oversubscribed_us').source !== 'default',
      sharedUs: params.get<number>('mpi_base_poll_shared_us'),
      yieldPerCore: params.get<number>('mpi_base_poll_yield'),
      yielding: schedAvailable(),
      nodeRanks: procs.filter((p) => p.gps.node === node).length,
      cores: cpuPool(),
    };
    const delay = new RunDelay();
    this.pollChoice = choosePolling({ ...inputs, ...machineNow(delay) });
    this.poller = new WaitPoller(this.pollChoice.budgetUs, () => {
      const c = choosePolling({ ...inputs, ...machineNow(delay) });
      if (c.budgetUs !== this.pollChoice.budgetUs || c.yields !== this.pollChoice.yields)
        this.verbose(1, c.reason);
      this.pollChoice = c;
      this.poller.giveWay = c.yields ? schedYield : null;
      return c.budgetUs;
    });
    this.poller.giveWay = this.pollChoice.yields ? schedYield : null;
    this.fastYield = new FastYield(
      params.get<number>('mpi_base_yield_every'),
      params.get<number>('mpi_base_yield_gap_us') / 1000,
    );
  }

  /**
   * A blocking call's wait for `req`, first part: a polling module (shared memory) spins until
   * `req` is done (see SyncPoll.spinUntil): true when it is. A module that is not polled (tcp):
   * false at once, no closure. Then `sleepFor`.
   */
  spinDone(req: RpiRequest): boolean {
    return this.syncPoll.enabled && this.syncPoll.spinUntil(() => req.state === ReqState.DONE);
  }

  /**
   * `spinDone` for a call whose fast receive already spun the module's whole bound
   * (`FastRecv.WAITED`): one look without a spin, so no call spins longer than that bound.
   */
  pollDone(req: RpiRequest): boolean {
    this.syncPoll.pollNow();
    return req.state === ReqState.DONE;
  }

  /** Waits for `req` from the event loop (polling for the window, mpi_base_poll_us). */
  sleepFor(req: RpiRequest): Promise<RpiRequest> {
    if (req.state === ReqState.DONE) return Promise.resolve(req);
    const since = this.waitBegins(req);
    return new Promise<RpiRequest>((resolve) => {
      req.onDone = (r) => {
        this.waitEnds(since, r);
        resolve(r);
      };
    });
  }

  /**
   * An MPI call begins to wait for `req` (or for something else: null): the event loop polls,
   * longer by the transfer time of the bytes `req` moves (a send's, or as many as a receive's
   * buffer holds). Returns the time it began, for `waitEnds`.
   */
  waitBegins(req: RpiRequest | null): number {
    this.fastYield.waited();
    const since = this.poller.hold(req === null ? 0 : waitBytes(req));
    if (this.poller.polling && this.actions.polling === true) this.pollInWindow();
    return since;
  }

  /** The wait for `req` that began at `since` is over (done, or its waiter went away). */
  waitEnds(since: number, req: RpiRequest | null): void {
    if (req === null) this.poller.release(since);
    else this.poller.release(since, req.type === ReqType.RECV ? req.stLength : sendBytes(req));
  }

  verbose(level: number, message: string): void {
    this.verboseStream.log(level, message);
  }

  // ---- request objects -------------------------------------------------------------------

  /** A request for a blocking call, from the pool (no allocation on the hot path). */
  acquire(): RpiRequest {
    return this.pool.pop() ?? new RpiRequest();
  }

  /** Returns a blocking call's request to the pool once it is done and destroyed. */
  release(req: RpiRequest): void {
    req.onDone = null;
    req.owner = null;
    req.buf = null;
    req.scatter = null;
    req.proc = null;
    req.rpi = null;
    req.error = null;
    req.state = ReqState.INIT;
    if (this.pool.length < POOL_MAX) this.pool.push(req);
  }

  /** Builds the rpi part of a filled-in request; gives it a fresh id. */
  build(req: RpiRequest): void {
    this.nextId = (this.nextId + 1) >>> 0 || 1;
    req.id = this.nextId;
    req.state = ReqState.INIT;
    this.actions.build(req);
  }

  /**
   * Starts a built request: a receive is matched against the unexpected messages first (one that
   * completes at once never touches the active list); everything else goes on the active list in
   * the start state and to the rpi, or to the self channel for a send to this process.
   */
  start(req: RpiRequest): void {
    req.resetForStart();
    req.state = ReqState.START;
    if (req.type === ReqType.RECV) {
      this.startRecv(req);
      return;
    }
    this.link(req);
    if (this.redo?.consumed(req)) this.complete(req);
    else if (req.proc === this.myProc) this.self.send(req);
    else this.actions.start(req);
    if (this.actions.polling && (req.state as number) !== ReqState.DONE) this.poll();
  }

  private startRecv(req: RpiRequest): void {
    const m = this.matcher.unexpectedCount === 0 ? null : this.matcher.takeUnexpected(req);
    if (m !== null) {
      this.take(req, m);
      if ((req.state as number) !== ReqState.DONE) this.link(req);
      return;
    }
    this.link(req);
    this.matcher.post(req);
    this.actions.posted?.(req);
    if (this.actions.polling) this.poll();
  }

  /** A receive took an unexpected message: status, then whoever queued it finishes the transfer. */
  private take(req: RpiRequest, m: UnexpectedMessage): void {
    matchStatus(req, m.proc, m);
    if (m.proc === this.myProc || m.restored) this.self.receive(req, m);
    else this.actions.matched(req, m);
  }

  /**
   * A blocking send's fast path (C.2.13), the one place its policy lives: only while nothing is
   * active (nothing it could overtake), to another process, and when the module has one.
   * True when the send is complete.
   */
  tryFastSend(req: RpiRequest): boolean {
    const fastsend = this.actions.fastsend;
    return (
      fastsend !== undefined &&
      this.fast &&
      this.activeCount === 0 &&
      req.proc !== this.myProc &&
      fastsend.call(this.actions, req)
    );
  }

  /**
   * A blocking receive's fast path (`RpiActions.fastrecv`), the one place its policy lives: only
   * while nothing is active (no posted receive an arriving message could belong to first, no
   * send), nothing is queued unexpected (an earlier message of the source would come first), no
   * rollback log records completions or restart plan replays them, from one other process, and
   * when the module has one. `req` is filled, not built.
   */
  tryFastRecv(req: RpiRequest): FastRecvResult {
    const fastrecv = this.actions.fastrecv;
    if (
      fastrecv === undefined ||
      !this.fast ||
      this.activeCount !== 0 ||
      this.matcher.unexpectedCount !== 0 ||
      this.crLog !== null ||
      this.redo !== null ||
      req.proc === null ||
      req.proc === this.myProc
    ) {
      return FastRecv.DECLINED;
    }
    const r = fastrecv.call(this.actions, req);
    if (r === FastRecv.DONE) req.state = ReqState.DONE;
    return r;
  }

  /** `RpiHost.matchFast`: whether the fast receive `req` takes `header` (status recorded). */
  matchFast(req: RpiRequest, header: MessageHeader): boolean {
    if (header.cid !== req.cid || header.rank !== req.rank || !tagMatches(req.tag, header.tag)) {
      return false;
    }
    const length = header.length;
    const kind = header.kind;
    if (length > (req.buf?.byteLength ?? -1)) return false;
    if (kind === DataKind.OBJECT && req.kind !== DataKind.OBJECT && length > 0) return false;
    const proc = req.proc!;
    if (header.seq > proc.recvSeq) proc.recvSeq = header.seq;
    matchStatus(req, proc, header);
    return true;
  }

  private link(req: RpiRequest): void {
    req.aPrev = this.aTail;
    req.aNext = null;
    if (this.aTail) this.aTail.aNext = req;
    else this.aHead = req;
    this.aTail = req;
    if (this.activeCount++ === 0) keepAlive.hold();
  }

  destroy(req: RpiRequest): void {
    this.actions.destroy(req);
  }

  /** `RpiHost.complete`: the rpi moved `req` to done. */
  complete(req: RpiRequest): void {
    if (req.aPrev !== null || this.aHead === req) {
      if (req.aPrev) req.aPrev.aNext = req.aNext;
      else this.aHead = req.aNext;
      if (req.aNext) req.aNext.aPrev = req.aPrev;
      else this.aTail = req.aPrev;
      req.aPrev = req.aNext = null;
      if (--this.activeCount === 0) keepAlive.release();
    }
    req.state = ReqState.DONE;
    if (this.crLog !== null) this.crLog.completed(req);
    const cb = req.onDone;
    if (cb !== null) cb(req);
  }

  /** The active requests, oldest first (for finalize diagnostics and peer failures). */
  active(): RpiRequest[] {
    const out: RpiRequest[] = [];
    for (let r = this.aHead; r; r = r.aNext) out.push(r);
    return out;
  }

  /**
   * Asks for a request back (`MPI_Cancel`): an unmatched receive or an unmatched send to self is
   * taken back here; a send to another process is the rpi's to take back. The request completes
   * (cancelled or not) as usual.
   */
  cancel(req: RpiRequest): void {
    if (req.state === ReqState.DONE || req.state === ReqState.INIT) return;
    req.flags |= ReqFlag.CANCEL;
    if (req.type === ReqType.RECV) {
      if (!this.matcher.unpost(req)) return;
      this.actions.unposted?.(req);
      req.cancelled = true;
      this.complete(req);
    } else if (req.proc === this.myProc) this.self.cancel(req);
    else this.actions.cancel(req);
  }

  // ---- matching: the rpi's side (RpiHost) --------------------------------------------------

  /** `RpiHost.matchPosted`: the posted receive an arriving message matches, status recorded. */
  matchPosted(proc: Proc, header: MessageHeader): RpiRequest | null {
    if (header.seq > proc.recvSeq) proc.recvSeq = header.seq;
    if (this.matcher.postedCount === 0) return null;
    const req = this.matcher.takePosted(header.cid, header.rank, header.tag);
    if (req === null) return null;
    matchStatus(req, proc, header);
    // A long message starts arriving for a receive: poll while it comes, if someone waits.
    if (header.length >= LONG_TRANSFER) this.poller.extend(header.length);
    return req;
  }

  /** `RpiHost.queueUnexpected`. */
  queueUnexpected(msg: UnexpectedMessage): void {
    if (msg.seq > msg.proc.recvSeq) msg.proc.recvSeq = msg.seq;
    this.matcher.addUnexpected(msg);
  }

  /** `RpiHost.withdrawUnexpected`. */
  withdrawUnexpected(msg: UnexpectedMessage): boolean {
    return this.matcher.removeUnexpected(msg);
  }

  /**
   * Non-blocking probe (C.2.11, now the MPI layer's): fills the status fields of `req` from the
   * earliest unexpected message it matches and returns true, or false.
   */
  iprobe(req: RpiRequest): boolean {
    this.syncPoll.pollNow();
    if (this.matcher.unexpectedCount === 0) return false;
    const m = this.matcher.findUnexpected(req);
    if (m === null) return false;
    req.stSource = m.rank;
    req.stTag = m.tag;
    req.stLength = m.length;
    req.stKind = m.kind;
    return true;
  }

  // ---- progress for polling transports ---------------------------------------------------

  /**
   * Keeps polling once per turn of the event loop while requests are active (only for
   * `polling` modules whose `pollWait` is 'spin'): a bounded spin (`advance(true)`) while an MPI
   * call waits whose own spin gave up, so the rank keeps answering within the spin instead of a
   * turn; a single look (`advance(false)`) when nobody waits (a turn between two waits of a
   * ping-pong must not spin for nothing). The event loop never sleeps meanwhile.
   */
  private poll(): void {
    if (this.polling || !this.syncPoll.keepsPolling) return;
    this.polling = true;
    const step = async () => {
      try {
        do {
          await nextTurn();
          await this.actions.advance(this.poller.waiting > 0);
        } while (this.activeCount > 0 || this.probeWaiters.length > 0);
      } finally {
        this.polling = false;
      }
    };
    void step();
  }

  /**
   * For `polling` modules that wait for an event of their own (`pollWait` 'event': sm's block
   * and hybrid modes): while the polling window of a waiting call is open (mpi_base_poll_us, the
   * WaitPoller's turns), the module is looked at once per event-loop turn (`advance(false)`), as
   * the event loop looks at the sockets of an event-driven module. When the window closes, the
   * module's own event wakes the call.
   */
  private pollInWindow(): void {
    if (this.polling || this.syncPoll.keepsPolling) return;
    this.polling = true;
    const step = async () => {
      try {
        do {
          await nextTurn();
          this.actions.advance(false);
        } while (this.poller.polling && this.poller.waiting > 0);
      } finally {
        this.polling = false;
      }
    };
    void step();
  }

  // ---- probes ------------------------------------------------------------------------------

  /** An unexpected message was queued; blocking probes look again. */
  private arrived(): void {
    this.arrivals++;
    if (this.probeWaiters.length === 0) return;
    const waiters = this.probeWaiters;
    this.probeWaiters = [];
    for (const w of waiters) w();
  }

  /** Resolves at the next arrival of an unexpected message. */
  nextArrival(): Promise<void> {
    const seen = this.arrivals;
    if (this.syncPoll.spinUntil(() => this.arrivals !== seen)) {
      return this.fastYield.completedAtOnce() ? nextTurn() : Promise.resolve();
    }
    keepAlive.hold();
    const since = this.waitBegins(null);
    const p = new Promise<void>((resolve) =>
      this.probeWaiters.push(() => {
        keepAlive.release();
        this.waitEnds(since, null);
        resolve();
      }),
    );
    if (this.actions.polling) this.poll();
    return p;
  }

  // ---- failures ----------------------------------------------------------------------------

  /** `RpiHost.peerFailed`: fail what involves the peer and report it, unless finalizing. */
  peerFailed(proc: Proc, reason: string): void {
    if (this.finalizing || proc.mode & ProcMode.DEAD) return;
    proc.mode |= ProcMode.DEAD;
    const error = new MpiError(
      ErrorClass.ERR_OTHER,
      `lost the connection to ${proc.describe()}: ${reason}`,
    );
    this.verbose(0, error.message);
    for (const req of this.active()) {
      if (req.proc === proc) {
        // A receive naming the dead peer leaves the queue: nothing may match it any more.
        if (req.type === ReqType.RECV) this.matcher.unpost(req);
        req.error = error;
        this.complete(req);
      }
    }
    this.onPeerFailed(proc, error);
  }

  // ---- restart from a checkpoint image (the self module) ------------------------------------

  /** Applies a restart plan before any communication (restart-replay.ts). */
  applyRestart(plan: RestartPlan): void {
    this.redo = RestartReplay.apply(plan, this.procs, this.matcher);
  }
}
