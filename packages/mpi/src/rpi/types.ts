/**
 * The rpi framework interface (Ch. 5, App. C), type API 2.0.0: what an rpi module exports and
 * what the MPI layer gives it. TypeScript rendering of `lam_ssi_rpi_1_1_0_t` (query + init) and
 * `lam_ssi_rpi_actions_1_1_0_t` (everything else), with one deliberate change of ownership
 * (DESIGN.md §6a): **the MPI layer owns matching**.
 *
 * - The MPI layer owns the process list, the requests, the active request list, the posted
 *   receives, the unexpected-message queue and sends to self. An rpi moves bytes: it starts sends
 *   to other processes, and for every message envelope that arrives it asks the MPI layer for the
 *   matching posted receive (`host.matchPosted`) or queues the message as unexpected
 *   (`host.queueUnexpected`). When a receive later takes an unexpected message, the MPI layer
 *   hands it back to the module that queued it (`matched`), which finishes the transfer. So one
 *   rpi that drives several paths (shared memory on-node, tcp off-node) matches an ANY_SOURCE
 *   receive across all of them, and a checkpoint can see every queued message.
 * - A request moves init → start → active → done (Fig. 5.2). The rpi tells the MPI layer that a
 *   request reached done with `host.complete(req)`; the MPI layer removes it from the active
 *   list and wakes whoever waits for it.
 * - In Node progress is driven by I/O events: an event-driven rpi progresses requests from its
 *   socket callbacks. `advance` exists for transports that must poll (shared memory); the MPI
 *   layer calls it synchronously if the actions say `polling: true` (`progress/sync-poll.ts`):
 *   a waiting call spins in it before it returns to the event loop, `test` and `iprobe` poll once.
 * - No function blocks (they may return promises where noted), and an rpi module never calls
 *   top-level MPI functions (C.2.1).
 */
import type { ParamRegistry, SsiModule } from '@ssi/core';
import { FRAMEWORKS } from '@ssi/core';
import type { ThreadLevel } from '../constants';
import type { MpiError } from '../errors';
import type { JobRuntime } from '../job-runtime';
import type { MessageHeader } from '../matching/header';
import type { UnexpectedMessage } from '../matching/unexpected';
import type { Proc } from '../proc';
import type { FastRecvResult } from './fast-recv';
import type { RpiRequest } from './request';

/**
 * The rpi type-API version this MPI layer implements. Core's `FRAMEWORKS` is the one source of
 * truth; a module declares its own literal (the version it was built for), never this constant.
 */
export const RPI_API_VERSION: string = FRAMEWORKS.rpi.api;

/** What `query` answers when the module can run (C.2.3). */
export interface RpiQueryAnswer {
  /** 0-100; the highest wins (a user-set `rpi_<name>_priority` overrides it). */
  priority: number;
  /** Lowest and highest MPI thread level the module supports (`THREAD_*`). */
  threadMin: ThreadLevel;
  threadMax: ThreadLevel;
}

/** What `query` may look at: the parameters and what is known of the job before the GPS exchange. */
export interface RpiQueryContext {
  params: ParamRegistry;
  /** The thread level the program asked for. */
  threadLevel: ThreadLevel;
  /** Size of MPI_COMM_WORLD. */
  size: number;
  /** This process's node address. */
  host: string;
  /** The largest number of the job's ranks on one node, when the launcher tells (mpirun does). */
  maxNodeRanks?: number;
  verbose(level: number, message: string): void;
}

/**
 * Limits of the MPI layer passed to `init` (C.2.4): the module may lower them (never raise),
 * e.g. when it packs tags into a bit field.
 */
export interface RpiLimits {
  maxTag: number;
  maxCid: number;
}

/**
 * The part of the job runtime an rpi module may use: identity, secret, out-of-band messages, and
 * the launcher's allgather (one exchange of connection addresses; every process calls it).
 */
export type RpiRuntime = Pick<
  JobRuntime,
  'jobId' | 'secret' | 'rank' | 'size' | 'host' | 'oobSend' | 'oobRecv' | 'allgather'
>;

/** Services the MPI layer provides to the selected module (App. C.1). */
export interface RpiHost {
  /** The whole process list, sorted the same way in every process. */
  readonly procs: readonly Proc[];
  /** This process's entry (`lam_myproc`). */
  readonly myProc: Proc;
  readonly runtime: RpiRuntime;
  readonly params: ParamRegistry;
  verbose(level: number, message: string): void;
  /** The request reached the done state (status and error filled). */
  complete(req: RpiRequest): void;
  /**
   * A message envelope from `proc` arrived. Returns the earliest posted receive it matches,
   * dequeued, with its status recorded (`stLength` is the number of bytes to deliver into its
   * buffer; a truncation or type error is set on it), or null: the module then queues the message
   * with `queueUnexpected` before it hands over the next envelope from any peer.
   * Envelopes from one peer must be handed over in sending order (MPI's non-overtaking rule).
   */
  matchPosted(proc: Proc, header: MessageHeader): RpiRequest | null;
  /**
   * For `fastrecv`: whether the message `header` from `req.proc` is the one the fast receive
   * `req` takes (its communicator, source and tag match, and it fits the buffer: a message that
   * would truncate or does not fit the buffer's type goes the usual way). When it is, the status
   * is recorded as `matchPosted` records it, and the module delivers the bytes.
   */
  matchFast(req: RpiRequest, header: MessageHeader): boolean;
  /** Queues a message no posted receive matched; a receive that takes it goes to `matched`. */
  queueUnexpected(msg: UnexpectedMessage): void;
  /**
   * Takes an unexpected message back (its sender cancelled it). False when a receive has taken
   * it already.
   */
  withdrawUnexpected(msg: UnexpectedMessage): boolean;
  /**
   * Opens another rpi module by name, for a module that builds on it (crtcp on tcp, sm's
   * off-node path): its parameters are registered, its `open` runs, and it stays open until
   * MPI.finalize, whatever the user's `--ssi rpi` list says. Declare it in the manifest's
   * `requires` too, so that a missing module is reported before selection. Rejects, naming what
   * is installed, when it is not installed or cannot run here.
   */
  openModule(name: string): Promise<RpiModule>;
  /**
   * The connection to `proc` broke outside finalize. The MPI layer fails the requests that
   * involve it and applies COMM_WORLD's error handler.
   */
  peerFailed(proc: Proc, reason: string): void;
}

/** The functions of the selected module (`lam_ssi_rpi_actions_1_1_0_t`). */
export interface RpiActions {
  /**
   * Set up communication with new processes (C.2.5), in process-list order so that every
   * process proceeds deadlock-free. Fails (rejects) rather than hangs when a peer is missing.
   */
  addprocs(procs: Proc[]): Promise<void>;
  /**
   * Stop using one process (`proc` given) or shut the module down (no argument; always called
   * last, after all communication completed) (C.2.6).
   */
  finalize(proc?: Proc): Promise<void>;
  /** Build the rpi part of a new request (C.2.7); once per persistent request. */
  build(req: RpiRequest): void;
  /**
   * Start a send to another process (C.2.8); it is on the active list in the start state. May
   * progress it further, up to done. Receives and sends to self never reach the module: the MPI
   * layer matches them.
   */
  start(req: RpiRequest): void;
  /**
   * A receive took an unexpected message this module queued. Its status is recorded (`stLength`
   * bytes to deliver); the module finishes the transfer: delivers a payload that is here
   * (`deliverBytes`), asks for a rendezvous body, acknowledges a synchronous send, and completes
   * the receive when its data is in place. The receive is active unless the message was complete
   * and the module completed it at once.
   */
  matched(req: RpiRequest, msg: UnexpectedMessage): void;
  /**
   * Optional: a receive was queued because no message matched it yet (e.g. to announce it to its
   * sender, as tcp's credits do).
   */
  posted?(req: RpiRequest): void;
  /** Optional: a receive announced through `posted` left the queue unmatched (cancelled). */
  unposted?(req: RpiRequest): void;
  /**
   * Progress active requests (C.2.9); true when any request changed state. `block` allows
   * waiting for progress. Event-driven modules return false at once. A `polling` module answers
   * synchronously (a boolean): `advance(false)` takes what is there now; `advance(true)` may spin
   * for its own bound (e.g. `rpi_sm_spin_us`) and returns true as soon as anything changed state,
   * false when the bound passed without. Request completions a module defers to promise callbacks
   * are seen too: a waiting call lets microtasks run between calls (never an event-loop turn).
   */
  advance(block: boolean): boolean | Promise<boolean>;
  /** Free the rpi part of a request (C.2.10). */
  destroy(req: RpiRequest): void;
  /**
   * The user cancelled the send `req` (its flags have `CANCEL`). If the module can still take
   * the message back, it sets `req.cancelled` and completes it (now or later); otherwise the
   * request completes normally. Receives are cancelled by the MPI layer. Not in LAM's table:
   * LAM's advance polls the flag instead.
   */
  cancel(req: RpiRequest): void;
  /**
   * Fast blocking send (C.2.13), tried when the active list is empty and the destination is
   * another process. `req` is filled but neither built nor started. Returns true when the send is
   * complete (the caller may reuse the buffer); false when it did nothing at all.
   */
  fastsend?(req: RpiRequest): boolean;
  /**
   * Fast blocking receive (the counterpart of `fastsend`, LAM's `fastrecv`), tried when nothing
   * is active (no posted receive, no send a message could belong to or overtake), no message is
   * queued unexpected, and the source is one other process. `req` is filled (a receive into
   * `req.buf` from `req.proc`, never ANY_SOURCE) but neither built nor started. The module looks
   * at, or waits within its own spin bound for, the next message from `req.proc`; when that is
   * an eager message wholly here it asks `host.matchFast`, and if the receive takes it delivers
   * `req.stLength` bytes into `req.buf` and answers `FastRecv.DONE` (the request is then done).
   * Otherwise it takes nothing and answers `DECLINED` or `WAITED` (see `FastRecv`).
   */
  fastrecv?(req: RpiRequest): FastRecvResult;
  /** Special memory for fast message passing (`MPI_Alloc_mem`, C.2.14). */
  allocMem?(size: number): Uint8Array;
  freeMem?(mem: Uint8Array): void;
  /** Checkpoint/restart quartet (C.2.16-19); absent when the module cannot checkpoint. */
  interrupt?(): Promise<void>;
  checkpoint?(): Promise<void>;
  continue?(): Promise<void>;
  restart?(): Promise<void>;
  /** The module must be polled with `advance` to make progress (see `advance`). */
  readonly polling?: boolean;
  /**
   * With `polling`: what the MPI layer does once a waiting call's spin (`advance(true)`) found
   * nothing. `'spin'` (the default) keeps polling while requests are active, a bounded spin at a
   * time with one event-loop turn between (timers and sockets of the process run there);
   * `'event'`: while the waiting call's polling window is open (mpi_base_poll_us, the window
   * every rpi gets) the MPI layer looks at the module once per event-loop turn (`advance(false)`),
   * then stops, and the module completes requests from an event of its own (it sleeps).
   */
  readonly pollWait?: 'spin' | 'event';
  /**
   * Optional: the module writes a send from a list of byte ranges itself (a gather write), so
   * the MPI layer need not pack a non-contiguous send (a derived datatype) into a copy. When
   * present, sends to other processes that meet the thresholds come with `req.gather` set and
   * `req.buf` null; every other send comes packed as before. The bytes on the wire must be the
   * same either way (the receiver cannot tell).
   */
  readonly gather?: RpiGather;
  /**
   * Optional: the module can put a receive's bytes into a layout that is not one buffer (a
   * derived datatype) through `req.scatter` (`RecvScatter`), chunk by chunk as they arrive, so
   * the MPI layer need not stage the whole message and unpack it afterwards. When present,
   * receives to which it applies come with `req.scatter` set and `req.buf` null (a module must
   * then not give such a receive a buffer of its own); every other receive comes as before.
   */
  readonly scatter?: RpiScatter;
}

/** When a module wants a receive as a `RecvScatter` (`RpiActions.scatter`) instead of staged. */
export interface RpiScatter {
  /** Receives of fewer packed bytes than this come staged (one buffer, unpacked at the end). */
  readonly minBytes: number;
}

/**
 * Where a scattered receive's bytes go: the MPI layer's incremental unpacker over the receive's
 * type map. Positions are byte offsets in the packed form of the message (the bytes on the
 * wire). An rpi hands over every byte it delivers, once, in any chunking and any order, either
 * by `write` or by reading straight into a view from `run`.
 */
export interface RecvScatter {
  /** Packed bytes the layout holds (what `buf.byteLength` is for a receive into a buffer). */
  readonly length: number;
  /** Places packed bytes `[at, at + src.byteLength)` (within `length`) into the layout. */
  write(src: Uint8Array, at: number): void;
  /**
   * The user's memory that packed bytes `[at, at + k)` go to, as one view, when they are
   * contiguous there for `k >= min` bytes (`k` at most `max`); else null. Bytes put into the view
   * need no `write`. Null as well when the message is not to be delivered (a type error).
   */
  run(at: number, min: number, max: number): Uint8Array | null;
  /**
   * The MPI layer calls this when the receive matches a message of element kind `kind`: a
   * signature mismatch is returned (the receive's error) and the bytes are then dropped, leaving
   * the user's buffer untouched. Not for rpi modules.
   */
  matched(kind: number, length: number): MpiError | null;
}

/** When a module wants a send as a list of byte ranges (`RpiActions.gather`) instead of packed. */
export interface RpiGather {
  /** Messages shorter than this many bytes come packed. */
  readonly minBytes: number;
  /** Messages whose ranges are shorter than this on average come packed (copying is cheaper). */
  readonly minSegmentBytes: number;
}

/** An rpi module: the SSI meta data plus query and init (`lam_ssi_rpi_1_1_0_t`). */
export interface RpiModule extends SsiModule {
  type: 'rpi';
  /**
   * Can the module run in this process, and at what priority (C.2.3)? null or a reason string
   * declines. Called in every process before the GPS exchange.
   */
  query(
    ctx: RpiQueryContext,
  ): RpiQueryAnswer | null | string | Promise<RpiQueryAnswer | null | string>;
  /**
   * Initialize the selected module with the initial process list (C.2.4); usually ends with
   * `addprocs(procs)`. May lower `limits`.
   */
  init(procs: Proc[], limits: RpiLimits, host: RpiHost): Promise<RpiActions>;
}
