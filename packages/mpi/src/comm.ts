import type { BsendBuffer } from './bsend';
import { ANY_SOURCE, ANY_TAG, PROC_NULL } from './constants';
import type { BufferLike } from './data';
import { bytesOf, DataKind, decodeValue, elementSize, encodeValue, kindOf } from './data';
import type { Engine } from './engine';
import { ERRORS_ARE_FATAL, type Errhandler } from './errhandler';
import { ErrorClass, MpiError } from './errors';
import type { Proc } from './proc';
import type { RequestOp } from './request';
import { PersistentRequest, Request } from './request';
import type { ReqTypeValue } from './rpi/request';
import { ReqFlag, ReqMark, ReqState, ReqType, RpiRequest } from './rpi/request';
import { Status } from './status';

/** What a communicator needs from the MPI instance that made it. */
export interface CommHost {
  readonly engine: Engine;
  readonly maxTag: number;
  bsendBuffer(): BsendBuffer | null;
  /** ERRORS_ARE_FATAL: abort the job with a message naming rank, communicator and call. */
  fatal(comm: Communicator, error: MpiError, call: string): void;
  /** Ends the whole job (`MPI_Abort`). */
  abort(code: number, why: string): Promise<never>;
}

const RESOLVED: Promise<void> = Promise.resolve();

type SendMode = 'send' | 'bsend' | 'ssend' | 'rsend';
const MODE_TYPE: Record<SendMode, ReqTypeValue> = {
  send: ReqType.SEND,
  bsend: ReqType.BSEND,
  ssend: ReqType.SSEND,
  rsend: ReqType.RSEND,
};

function isBufferLike(v: unknown): v is BufferLike {
  return typeof v === 'object' && v !== null && ArrayBuffer.isView(v);
}

function procNullStatus(): Status {
  const st = new Status();
  st.source = PROC_NULL;
  st.tag = ANY_TAG;
  return st;
}

/**
 * An intracommunicator (`MPI_Comm`): a group of processes and a context. Point-to-point calls
 * follow mpi4py's shape, Promise-based: a blocking call is awaited, a non-blocking call returns a
 * `Request`. Data is any typed array, Buffer or DataView (raw bytes, received without a copy into
 * the caller's buffer) or any other value (msgpackr-encoded).
 */
export class Communicator {
  /** Error handler for errors in calls on this communicator (default `ERRORS_ARE_FATAL`). */
  errhandler: Errhandler = ERRORS_ARE_FATAL;

  /** @internal */
  constructor(
    private readonly host: CommHost,
    /** Context id: messages of different communicators never match. */
    readonly cid: number,
    /** @internal The group: process entries in rank order. */
    readonly procs: readonly Proc[],
    /** This process's rank. */
    readonly rank: number,
    /** Name for messages ("COMM_WORLD"). */
    public name: string,
  ) {}

  /** Number of processes (`MPI_Comm_size`). */
  get size(): number {
    return this.procs.length;
  }

  /**
   * @internal A communicator over the same group with another context id: its traffic never
   * matches this one's. Every process of the group must create it with the same `cid`.
   */
  withContext(cid: number, name: string): Communicator {
    return new Communicator(this.host, cid, this.procs, this.rank, name);
  }

  /** @internal */
  engineOf(): Engine {
    return this.host.engine;
  }

  // ---- errors ------------------------------------------------------------------------------

  /** @internal Applies the error handler; returns the error for the caller to throw. */
  raiseSync(error: unknown, call: string): MpiError {
    const err =
      error instanceof MpiError
        ? error
        : new MpiError(
            ErrorClass.ERR_INTERN,
            `internal error: ${(error as Error)?.stack ?? error}`,
          );
    const h = this.errhandler;
    if (h === ERRORS_ARE_FATAL) this.host.fatal(this, err, call);
    else if (h.fn) h.fn(this, err);
    return err;
  }

  private fail<T>(error: unknown, call: string): Promise<T> {
    return Promise.reject(this.raiseSync(error, call));
  }

  private badRank(rank: number, what: string): MpiError | null {
    if (Number.isInteger(rank) && rank >= 0 && rank < this.procs.length) return null;
    return new MpiError(
      ErrorClass.ERR_RANK,
      `invalid ${what} rank ${String(rank)}: ${this.name} has ranks 0-${this.procs.length - 1}` +
        `${what === 'source' ? ', ANY_SOURCE' : ''} and PROC_NULL`,
    );
  }

  private checkDest(dest: number): MpiError | null {
    return dest === PROC_NULL ? null : this.badRank(dest, 'destination');
  }

  private checkSource(source: number): MpiError | null {
    return source === ANY_SOURCE || source === PROC_NULL ? null : this.badRank(source, 'source');
  }

  private checkTag(tag: number, receive: boolean): MpiError | null {
    if (Number.isInteger(tag) && tag >= 0 && tag <= this.host.maxTag) return null;
    if (receive && tag === ANY_TAG) return null;
    return new MpiError(
      ErrorClass.ERR_TAG,
      `invalid tag ${String(tag)}: tags are integers 0-${this.host.maxTag}` +
        `${receive ? ' or ANY_TAG' : ''}`,
    );
  }

  private checkInto(into: unknown): MpiError | null {
    return isBufferLike(into)
      ? null
      : new MpiError(
          ErrorClass.ERR_BUFFER,
          `the receive buffer must be a typed array, Buffer or DataView; to receive any value ` +
            `use comm.recv(source, tag)`,
        );
  }

  // ---- request building ---------------------------------------------------------------------

  private fillSend(
    req: RpiRequest,
    type: ReqTypeValue,
    bytes: Uint8Array,
    kind: number,
    dest: number,
    tag: number,
  ): void {
    const proc = this.procs[dest]!;
    req.type = type;
    req.marks = ReqMark.SOURCE;
    req.flags = 0;
    req.buf = bytes;
    req.kind = kind;
    req.rank = dest;
    req.tag = tag;
    req.cid = this.cid;
    req.myRank = this.rank;
    req.proc = proc;
    req.seq = proc.sendSeq = (proc.sendSeq + 1) >>> 0;
  }

  private fillRecv(
    req: RpiRequest,
    type: ReqTypeValue,
    buf: Uint8Array | null,
    kind: number,
    source: number,
    tag: number,
  ): void {
    req.type = type;
    req.marks = ReqMark.DEST;
    req.flags = 0;
    req.buf = buf;
    req.kind = kind;
    req.rank = source;
    req.tag = tag;
    req.cid = this.cid;
    req.myRank = this.rank;
    req.proc = source === ANY_SOURCE ? null : this.procs[source]!;
    req.seq = 0;
  }

  /** Runs a filled blocking request to completion; resolves with it (still to be released). */
  private runBlocking(req: RpiRequest): Promise<RpiRequest> {
    const engine = this.host.engine;
    req.marks |= ReqMark.BLKTYPE;
    engine.build(req);
    req.onDone = null;
    req.flags = ReqFlag.BLOCK;
    engine.start(req);
    if (req.state === ReqState.DONE) return Promise.resolve(req);
    return new Promise<RpiRequest>((resolve) => {
      req.onDone = resolve;
    });
  }

  private finishBlocking(req: RpiRequest): MpiError | null {
    const engine = this.host.engine;
    const err = req.error;
    engine.destroy(req);
    engine.release(req);
    return err;
  }

  private statusOf(req: RpiRequest, elementBytes: number): Status {
    const st = new Status();
    st.source = req.stSource;
    st.tag = req.stTag;
    st.byteLength = req.stLength;
    st.kind = req.stKind;
    st.cancelled = req.cancelled;
    st.elementBytes = elementBytes;
    st.error = req.error;
    return st;
  }

  // ---- blocking sends ------------------------------------------------------------------------

  /** Standard-mode send (`MPI_Send`): resolves when `data` may be reused. */
  send(data: unknown, dest: number, tag = 0): Promise<void> {
    return this.blockingSend('send', data, dest, tag);
  }

  /** Buffered-mode send (`MPI_Bsend`): copies into the attached buffer and resolves at once. */
  bsend(data: unknown, dest: number, tag = 0): Promise<void> {
    return this.blockingSend('bsend', data, dest, tag);
  }

  /** Synchronous-mode send (`MPI_Ssend`): resolves once the receiver has matched the message. */
  ssend(data: unknown, dest: number, tag = 0): Promise<void> {
    return this.blockingSend('ssend', data, dest, tag);
  }

  /** Ready-mode send (`MPI_Rsend`): the matching receive must already be posted. */
  rsend(data: unknown, dest: number, tag = 0): Promise<void> {
    return this.blockingSend('rsend', data, dest, tag);
  }

  private blockingSend(mode: SendMode, data: unknown, dest: number, tag: number): Promise<void> {
    const engine = this.host.engine;
    if (!engine.gate.open) {
      return engine.gate.deferPromise(() => this.blockingSend(mode, data, dest, tag));
    }
    const bad = this.checkDest(dest) ?? this.checkTag(tag, false);
    if (bad) return this.fail(bad, mode);
    if (dest === PROC_NULL) return RESOLVED;
    let bytes: Uint8Array;
    let kind: number;
    if (isBufferLike(data)) {
      kind = kindOf(data);
      bytes = data instanceof Uint8Array ? data : bytesOf(data);
    } else {
      try {
        ({ bytes, kind } = encodeValue(data));
      } catch (err) {
        return this.fail(err, mode);
      }
    }
    if (mode === 'bsend') {
      try {
        this.launchBuffered(bytes, kind, dest, tag);
      } catch (err) {
        return this.fail(err, mode);
      }
      return RESOLVED;
    }
    const req = engine.acquire();
    this.fillSend(req, MODE_TYPE[mode], bytes, kind, dest, tag);
    const a = engine.actions;
    if (
      mode !== 'ssend' &&
      engine.fast &&
      engine.activeCount === 0 &&
      req.proc !== engine.myProc &&
      a.fastsend !== undefined &&
      a.fastsend(req)
    ) {
      engine.release(req);
      return RESOLVED;
    }
    return this.runBlocking(req).then((r) => {
      const err = this.finishBlocking(r);
      if (err) return this.fail(err, mode);
    });
  }

  /** Copies a message into the attached buffer and starts its transmission. */
  private launchBuffered(bytes: Uint8Array, kind: number, dest: number, tag: number): void {
    const buffer = this.host.bsendBuffer();
    if (!buffer) {
      throw new MpiError(
        ErrorClass.ERR_BUFFER,
        'buffered send without an attached buffer; call mpi.attachBuffer(size) first ' +
          `(size = sum of message sizes + BSEND_OVERHEAD each)`,
      );
    }
    const length = bytes.byteLength;
    const offset = buffer.allocate(length);
    const region = buffer.memory.subarray(offset, offset + length);
    region.set(bytes);
    const engine = this.host.engine;
    const req = engine.acquire();
    this.fillSend(req, ReqType.BSEND, region, kind, dest, tag);
    req.marks |= ReqMark.DYNBUF;
    req.onDone = (r) => {
      if (r.error) engine.verbose(0, `buffered send to rank ${dest} failed: ${r.error.message}`);
      engine.destroy(r);
      engine.release(r);
      buffer.release(offset, length);
    };
    engine.build(req);
    engine.start(req);
  }

  // ---- non-blocking and persistent sends -----------------------------------------------------

  /** Standard-mode non-blocking send (`MPI_Isend`). */
  isend(data: unknown, dest: number, tag = 0): Request<Status> {
    return this.startSend('isend', 'send', data, dest, tag);
  }
  /** Buffered-mode non-blocking send (`MPI_Ibsend`); the request is complete at once. */
  ibsend(data: unknown, dest: number, tag = 0): Request<Status> {
    return this.startSend('ibsend', 'bsend', data, dest, tag);
  }
  /** Synchronous-mode non-blocking send (`MPI_Issend`). */
  issend(data: unknown, dest: number, tag = 0): Request<Status> {
    return this.startSend('issend', 'ssend', data, dest, tag);
  }
  /** Ready-mode non-blocking send (`MPI_Irsend`). */
  irsend(data: unknown, dest: number, tag = 0): Request<Status> {
    return this.startSend('irsend', 'rsend', data, dest, tag);
  }

  /** Persistent standard-mode send (`MPI_Send_init`); each `start()` sends `data`'s current contents. */
  sendInit(data: unknown, dest: number, tag = 0): PersistentRequest<Status> {
    return this.makeSend('sendInit', 'send', data, dest, tag, true) as PersistentRequest<Status>;
  }
  /** Persistent buffered-mode send (`MPI_Bsend_init`). */
  bsendInit(data: unknown, dest: number, tag = 0): PersistentRequest<Status> {
    return this.makeSend('bsendInit', 'bsend', data, dest, tag, true) as PersistentRequest<Status>;
  }
  /** Persistent synchronous-mode send (`MPI_Ssend_init`). */
  ssendInit(data: unknown, dest: number, tag = 0): PersistentRequest<Status> {
    return this.makeSend('ssendInit', 'ssend', data, dest, tag, true) as PersistentRequest<Status>;
  }
  /** Persistent ready-mode send (`MPI_Rsend_init`). */
  rsendInit(data: unknown, dest: number, tag = 0): PersistentRequest<Status> {
    return this.makeSend('rsendInit', 'rsend', data, dest, tag, true) as PersistentRequest<Status>;
  }

  private startSend(
    call: string,
    mode: SendMode,
    data: unknown,
    dest: number,
    tag: number,
  ): Request<Status> {
    const r = this.makeSend(call, mode, data, dest, tag, false);
    this.startRequest(r);
    return r;
  }

  private makeSend(
    call: string,
    mode: SendMode,
    data: unknown,
    dest: number,
    tag: number,
    persistent: boolean,
  ): Request<Status> {
    const bad = this.checkDest(dest) ?? this.checkTag(tag, false);
    if (bad) throw this.raiseSync(bad, call);
    const engine = this.host.engine;
    const buffer = isBufferLike(data);
    let bytes: Uint8Array | null = buffer ? bytesOf(data) : null;
    const kind = buffer ? kindOf(data) : DataKind.OBJECT;
    let rreq: RpiRequest | null = null;
    const encode = (): Uint8Array => {
      // Objects are encoded at every start: a persistent request sends the current value.
      if (bytes !== null && buffer) return bytes;
      bytes = encodeValue(data).bytes;
      return bytes;
    };
    const op: RequestOp = {
      object: false,
      elementBytes: 0,
      immediateStatus: () => (dest === PROC_NULL ? procNullStatus() : new Status()),
      destroy: (r) => engine.destroy(r),
      launch: () => {
        if (dest === PROC_NULL) return null;
        const payload = encode();
        if (mode === 'bsend') {
          this.launchBuffered(payload, kind, dest, tag);
          return null;
        }
        if (rreq === null) {
          rreq = new RpiRequest();
          this.fillSend(rreq, MODE_TYPE[mode], payload, kind, dest, tag);
          if (persistent) rreq.marks |= ReqMark.PERSIST;
          engine.build(rreq);
        } else {
          rreq.buf = payload;
          const proc = rreq.proc!;
          rreq.seq = proc.sendSeq = (proc.sendSeq + 1) >>> 0;
        }
        const r = rreq;
        if (!persistent) rreq = null;
        engine.start(r);
        return r;
      },
    };
    return persistent ? new PersistentRequest(this, call, op, true) : new Request(this, call, op);
  }

  /** Starts a request, now or (checkpoint in progress) when the entry gate opens. */
  private startRequest(r: Request<unknown>): void {
    const engine = this.host.engine;
    try {
      if (engine.gate.open) r.begin();
      else {
        // The request is active from the caller's point of view; the rpi sees it later.
        r.pend();
        engine.gate.defer(() => {
          try {
            r.begin();
          } catch (err) {
            this.raiseSync(err, 'start');
          }
        });
      }
    } catch (err) {
      throw this.raiseSync(err, 'start');
    }
  }

  /** @internal `PersistentRequest.start`. */
  startPersistent(r: PersistentRequest<unknown>): void {
    this.startRequest(r);
  }

  // ---- receives --------------------------------------------------------------------------

  /**
   * Blocking receive (`MPI_Recv`).
   *
   * - `recv(into, source?, tag?)`: receives into the typed array / Buffer `into` without an
   *   intermediate copy where the transport allows; resolves with the `Status`.
   * - `recv(source?, tag?, status?)`: receives any message and resolves with its value (a typed
   *   array of the sent type, a Buffer, or the decoded object); fills `status` if given.
   *
   * `source` defaults to ANY_SOURCE, `tag` to ANY_TAG.
   */
  recv(into: BufferLike, source?: number, tag?: number): Promise<Status>;
  recv<T = unknown>(source?: number, tag?: number, status?: Status): Promise<T>;
  recv(
    a?: BufferLike | number,
    b?: number | Status,
    c?: number | Status,
  ): Promise<Status> | Promise<unknown> {
    if (isBufferLike(a))
      return this.recvInto(a, (b as number) ?? ANY_SOURCE, (c as number) ?? ANY_TAG);
    return this.recvValue(a ?? ANY_SOURCE, (b as number) ?? ANY_TAG, c as Status | undefined);
  }

  private recvInto(into: BufferLike, source: number, tag: number): Promise<Status> {
    const engine = this.host.engine;
    if (!engine.gate.open) return engine.gate.deferPromise(() => this.recvInto(into, source, tag));
    const bad = this.checkSource(source) ?? this.checkTag(tag, true);
    if (bad) return this.fail(bad, 'recv');
    if (source === PROC_NULL) return Promise.resolve(procNullStatus());
    const kind = kindOf(into);
    const elementBytes = elementSize(kind);
    const req = engine.acquire();
    this.fillRecv(
      req,
      ReqType.RECV,
      into instanceof Uint8Array ? into : bytesOf(into),
      kind,
      source,
      tag,
    );
    const a = engine.actions;
    if (
      engine.fast &&
      engine.activeCount === 0 &&
      source !== ANY_SOURCE &&
      req.proc !== engine.myProc &&
      a.fastrecv !== undefined &&
      a.fastrecv(req)
    ) {
      const st = this.statusOf(req, elementBytes);
      const err = req.error;
      engine.release(req);
      return err ? this.fail(err, 'recv') : Promise.resolve(st);
    }
    return this.runBlocking(req).then((r) => {
      const st = this.statusOf(r, elementBytes);
      const err = this.finishBlocking(r);
      return err ? this.fail<Status>(err, 'recv') : st;
    });
  }

  private recvValue(source: number, tag: number, status?: Status): Promise<unknown> {
    const engine = this.host.engine;
    if (!engine.gate.open) {
      return engine.gate.deferPromise(() => this.recvValue(source, tag, status));
    }
    const bad = this.checkSource(source) ?? this.checkTag(tag, true);
    if (bad) return this.fail(bad, 'recv');
    if (source === PROC_NULL) {
      if (status) Object.assign(status, procNullStatus());
      return Promise.resolve(undefined);
    }
    const req = engine.acquire();
    this.fillRecv(req, ReqType.RECV, null, DataKind.OBJECT, source, tag);
    const finish = (r: RpiRequest): unknown => {
      if (status) Object.assign(status, this.statusOf(r, 0));
      let err = r.error;
      let value: unknown;
      if (!err) {
        try {
          value = decodeValue(r.buf ?? new Uint8Array(0), r.stKind);
        } catch (e) {
          err = e as MpiError;
        }
      }
      return err ? err : value;
    };
    const a = engine.actions;
    if (
      engine.fast &&
      engine.activeCount === 0 &&
      source !== ANY_SOURCE &&
      req.proc !== engine.myProc &&
      a.fastrecv !== undefined &&
      a.fastrecv(req)
    ) {
      const out = finish(req);
      engine.release(req);
      return out instanceof MpiError ? this.fail(out, 'recv') : Promise.resolve(out);
    }
    return this.runBlocking(req).then((r) => {
      const out = finish(r);
      this.finishBlocking(r);
      return out instanceof MpiError ? this.fail(out, 'recv') : out;
    });
  }

  /**
   * Non-blocking receive (`MPI_Irecv`): `irecv(into, source?, tag?)` resolves `wait()` with the
   * Status; `irecv(source?, tag?)` with the received value (`req.status` has the status).
   */
  irecv(into: BufferLike, source?: number, tag?: number): Request<Status>;
  irecv<T = unknown>(source?: number, tag?: number): Request<T>;
  irecv(a?: BufferLike | number, b?: number, c?: number): Request<unknown> {
    const r = this.makeRecv('irecv', a, b, c, false);
    this.startRequest(r);
    return r;
  }

  /** Persistent receive (`MPI_Recv_init`), into a buffer or of any value. */
  recvInit(into: BufferLike, source?: number, tag?: number): PersistentRequest<Status>;
  recvInit<T = unknown>(source?: number, tag?: number): PersistentRequest<T>;
  recvInit(a?: BufferLike | number, b?: number, c?: number): PersistentRequest<unknown> {
    return this.makeRecv('recvInit', a, b, c, true) as PersistentRequest<unknown>;
  }

  private makeRecv(
    call: string,
    a: BufferLike | number | undefined,
    b: number | undefined,
    c: number | undefined,
    persistent: boolean,
  ): Request<unknown> {
    const into = isBufferLike(a) ? a : null;
    const source = (into ? b : (a as number | undefined)) ?? ANY_SOURCE;
    const tag = (into ? c : b) ?? ANY_TAG;
    const bad = this.checkSource(source) ?? this.checkTag(tag, true);
    if (bad) throw this.raiseSync(bad, call);
    const engine = this.host.engine;
    const kind = into ? kindOf(into) : DataKind.OBJECT;
    const bytes = into ? bytesOf(into) : null;
    let rreq: RpiRequest | null = null;
    const op: RequestOp = {
      object: into === null,
      elementBytes: into ? elementSize(kind) : 0,
      immediateStatus: procNullStatus,
      destroy: (r) => engine.destroy(r),
      launch: () => {
        if (source === PROC_NULL) return null;
        if (rreq === null) {
          rreq = new RpiRequest();
          this.fillRecv(rreq, ReqType.RECV, bytes, kind, source, tag);
          if (persistent) rreq.marks |= ReqMark.PERSIST;
          engine.build(rreq);
        } else {
          rreq.buf = bytes;
          rreq.proc = source === ANY_SOURCE ? null : this.procs[source]!;
        }
        const r = rreq;
        if (!persistent) rreq = null;
        engine.start(r);
        return r;
      },
    };
    return persistent ? new PersistentRequest(this, call, op, true) : new Request(this, call, op);
  }

  // ---- probe -------------------------------------------------------------------------------

  /**
   * Non-blocking probe (`MPI_Iprobe`): the Status of a matching message that has arrived (not
   * received), or undefined. `status.count` is in the sender's element type.
   */
  iprobe(source: number = ANY_SOURCE, tag: number = ANY_TAG): Status | undefined {
    const bad = this.checkSource(source) ?? this.checkTag(tag, true);
    if (bad) throw this.raiseSync(bad, 'iprobe');
    if (source === PROC_NULL) return procNullStatus();
    const engine = this.host.engine;
    if (!engine.gate.open) return undefined;
    const req = engine.acquire();
    this.fillRecv(req, ReqType.PROBE, null, DataKind.OBJECT, source, tag);
    const found = engine.actions.iprobe(req);
    const st = found ? this.statusOf(req, 0) : undefined;
    engine.release(req);
    return st;
  }

  /** Blocking probe (`MPI_Probe`): waits until a matching message has arrived. */
  async probe(source: number = ANY_SOURCE, tag: number = ANY_TAG): Promise<Status> {
    const engine = this.host.engine;
    if (!engine.gate.open) await engine.gate.deferPromise(() => RESOLVED);
    for (;;) {
      const st = this.iprobe(source, tag);
      if (st) return st;
      await engine.nextArrival();
    }
  }

  // ---- combined ----------------------------------------------------------------------------

  /**
   * Send and receive at once (`MPI_Sendrecv`), deadlock-free in rings and exchanges.
   * `sendrecv(data, dest, sendTag, into, source, recvTag)` resolves with the Status of the
   * receive into `into`; `sendrecv(data, dest, sendTag, source, recvTag, status?)` with the
   * received value.
   */
  sendrecv(
    data: unknown,
    dest: number,
    sendTag: number,
    into: BufferLike,
    source?: number,
    recvTag?: number,
  ): Promise<Status>;
  sendrecv<T = unknown>(
    data: unknown,
    dest: number,
    sendTag?: number,
    source?: number,
    recvTag?: number,
    status?: Status,
  ): Promise<T>;
  async sendrecv(
    data: unknown,
    dest: number,
    sendTag = 0,
    d?: BufferLike | number,
    e?: number,
    f?: number | Status,
  ): Promise<unknown> {
    if (isBufferLike(d)) {
      const r = this.irecv(d, e ?? ANY_SOURCE, (f as number | undefined) ?? ANY_TAG);
      const s = this.isend(data, dest, sendTag);
      const [st] = await Promise.all([r.wait(), s.wait()]);
      return st;
    }
    const r = this.irecv(d ?? ANY_SOURCE, e ?? ANY_TAG);
    const s = this.isend(data, dest, sendTag);
    const [value] = await Promise.all([r.wait(), s.wait()]);
    if (f instanceof Status && r.status) Object.assign(f, r.status);
    return value;
  }

  /**
   * Send the contents of `buf` and receive into the same buffer (`MPI_Sendrecv_replace`).
   */
  async sendrecvReplace(
    buf: BufferLike,
    dest: number,
    sendTag = 0,
    source: number = ANY_SOURCE,
    recvTag: number = ANY_TAG,
  ): Promise<Status> {
    const err = this.checkInto(buf);
    if (err) return this.fail(err, 'sendrecvReplace');
    const bytes = bytesOf(buf);
    const copy = Buffer.allocUnsafeSlow(bytes.byteLength);
    copy.set(bytes);
    const kind = kindOf(buf);
    // Send the copy with the original's kind, so that a receiver without a buffer gets its type.
    const view = kind === DataKind.BUFFER ? copy : decodeValue(copy, kind);
    const r = this.irecv(buf, source, recvTag);
    const s = this.isend(view, dest, sendTag);
    const [st] = await Promise.all([r.wait(), s.wait()]);
    return st;
  }

  /**
   * Aborts the whole job (`MPI_Abort`): every process is killed and the launcher exits with
   * `code`. The promise never settles.
   */
  abort(code = 1): Promise<never> {
    return this.host.abort(code, `${this.name}.abort(${code}) called on rank ${this.rank}`);
  }
}
