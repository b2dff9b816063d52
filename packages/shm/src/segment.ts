import { forgetCreated, registerCreated } from './cleanup';
import { ShmError } from './errors';
import {
  computeLayout,
  DEFAULT_POOL_BLOCK,
  DEFAULT_POOL_SIZE,
  DEFAULT_SHORT_LIMIT,
  H,
  HEADER_BYTES,
  LAYOUT_VERSION,
  type Layout,
  LOCK_BLOCK,
  LOCK_SPIN,
  MAGIC,
  MAX_JOB_BYTES,
  P,
  PROC_ATTACHED,
  PROC_CLOSED,
  procLineOffset,
  STATE_BROKEN,
  STATE_READY,
} from './layout';
import { isProcessAlive } from './liveness';
import { checkName, segmentName } from './names';
import { type BufferKind, type NativeHandle, native, systemError } from './native';

export type LockKind = 'spin' | 'block';

/** How a segment is named: explicitly, or derived from session directory, job and tag. */
export interface SegmentNaming {
  /** An explicit shm_open name ("/..."). Default: derived from sessionDir, job and tag. */
  name?: string;
  /** The universe's session directory (used to derive the name). */
  sessionDir?: string;
  /** The job id: part of the name and recorded in (and checked against) the header. */
  job: string;
  /** What the segment is for; default "sm". */
  tag?: string;
}

export interface CreateOptions extends SegmentNaming {
  /** Number of processes that will attach (N), including the creator. */
  nprocs: number;
  /** The creator's own slot (local rank), default 0. */
  index?: number;
  /** Largest message carried whole in a postbox; default 8192 bytes (LAM's default). */
  shortLimit?: number;
  /** Size of the pool for large messages; default 8 MiB; 0 = no pool. */
  poolSize?: number;
  /** Allocation unit of the pool; default 16 KiB (a power of two, at least 4096). */
  poolBlock?: number;
  /** Pool lock: 'spin' (LAM usysv) or 'block' (LAM sysv, futex based). Default 'block'. */
  lock?: LockKind;
  /**
   * How JavaScript sees the memory: 'ab' (default), an external ArrayBuffer, or 'sab', a
   * SharedArrayBuffer. Chosen by measurement (README, "Buffer choice"): same Atomics cost and
   * small-message latency, but copies into/out of a SharedArrayBuffer run at about half speed in
   * V8, and only an ArrayBuffer can be detached when the segment is closed.
   */
  buffer?: BufferKind;
  /** Pre-fault the pages at creation (MAP_POPULATE). Default true. */
  populate?: boolean;
  /** Unlink the name once all nprocs processes have attached. Default true. */
  unlinkWhenAllAttached?: boolean;
}

export interface AttachOptions extends SegmentNaming {
  /** This process's slot (local rank), 0 <= index < nprocs. */
  index: number;
  /**
   * Keep retrying while the segment does not exist yet or is still being initialised, for up to
   * this many milliseconds. Default 0: one attempt.
   */
  timeoutMs?: number;
  /** Default 'ab'; processes may differ. */
  buffer?: BufferKind;
  /** Default false. */
  populate?: boolean;
  /** Default true (see CreateOptions). */
  unlinkWhenAllAttached?: boolean;
}

function resolveName(o: SegmentNaming): string {
  if (o.name !== undefined) return checkName(o.name);
  if (o.sessionDir === undefined) {
    throw new ShmError('BAD_ARGS', 'give either name or sessionDir (plus job) to name the segment');
  }
  return segmentName({ sessionDir: o.sessionDir, job: o.job, tag: o.tag });
}

function encodeJob(job: string): Uint8Array {
  if (typeof job !== 'string' || job.length === 0) {
    throw new ShmError('BAD_ARGS', 'job must be a non-empty string (the job id)');
  }
  const bytes = new TextEncoder().encode(job);
  if (bytes.length > MAX_JOB_BYTES) {
    throw new ShmError(
      'BAD_ARGS',
      `job id "${job}" is ${bytes.length} bytes in UTF-8; at most ${MAX_JOB_BYTES} are allowed`,
    );
  }
  return bytes;
}

/**
 * One shared segment as seen by one process: the creator (`ShmSegment.create`) or a peer
 * (`ShmSegment.attach`). Holds the mapping, the layout and this process's slot.
 */
export class ShmSegment {
  readonly name: string;
  readonly job: string;
  readonly index: number;
  readonly layout: Layout;
  readonly lockKind: LockKind;
  readonly isCreator: boolean;
  /** The whole segment. Empty (length 0) after close(). */
  readonly buffer: ArrayBuffer | SharedArrayBuffer;
  readonly u8: Uint8Array;
  readonly i32: Int32Array;
  /** @internal the native mapping */
  readonly handle: NativeHandle;
  private closed = false;
  private unlinked = false;

  private constructor(
    name: string,
    job: string,
    index: number,
    layout: Layout,
    handle: NativeHandle,
    isCreator: boolean,
  ) {
    this.name = name;
    this.job = job;
    this.index = index;
    this.layout = layout;
    this.handle = handle;
    this.isCreator = isCreator;
    this.buffer = handle.buffer;
    this.u8 = new Uint8Array(handle.buffer);
    this.i32 = new Int32Array(handle.buffer);
    this.lockKind = this.i32[H.lockKind] === LOCK_SPIN ? 'spin' : 'block';
  }

  /** Create and initialise a segment; the caller takes slot `index` (default 0). */
  static create(opts: CreateOptions): ShmSegment {
    const name = resolveName(opts);
    const job = encodeJob(opts.job);
    const layout = computeLayout({
      nprocs: opts.nprocs,
      shortLimit: opts.shortLimit ?? DEFAULT_SHORT_LIMIT,
      poolSize: opts.poolSize ?? DEFAULT_POOL_SIZE,
      poolBlock: opts.poolBlock ?? DEFAULT_POOL_BLOCK,
    });
    const index = opts.index ?? 0;
    checkIndex(index, layout.nprocs);
    const lock = opts.lock ?? 'block';
    if (lock !== 'spin' && lock !== 'block') {
      throw new ShmError('BAD_ARGS', `lock must be 'spin' or 'block', got ${String(lock)}`);
    }
    const kind = checkKind(opts.buffer);
    let handle: NativeHandle;
    try {
      handle = native().create(name, layout.totalSize, kind, opts.populate ?? true);
    } catch (err) {
      const e = systemError(err, `creating shared segment ${name}`);
      if (e.failure === 'EXISTS') {
        throw new ShmError(
          'EXISTS',
          `shared segment ${name} already exists: another job with the same session and job id is running, or one crashed; ` +
            'run ssi-shm-clean (or lamclean) for this session, or use another job id',
        );
      }
      throw e;
    }
    registerCreated(name);
    const i32 = new Int32Array(handle.buffer);
    const u8 = new Uint8Array(handle.buffer);
    // The creator pid goes first, so a crash during initialisation can be attributed.
    Atomics.store(i32, H.creatorPid, process.pid);
    i32[H.version] = LAYOUT_VERSION;
    i32[H.cacheLine] = layout.cacheLine;
    i32[H.sizeLo] = (layout.totalSize % 2 ** 32) | 0;
    i32[H.sizeHi] = Math.floor(layout.totalSize / 2 ** 32);
    i32[H.nprocs] = layout.nprocs;
    i32[H.shortLimit] = layout.shortLimit;
    i32[H.ringCapacity] = layout.ringCapacity;
    i32[H.poolBlock] = layout.poolBlock;
    i32[H.poolBlocks] = layout.poolBlocks;
    i32[H.jobLength] = job.length;
    i32[H.lockKind] = lock === 'spin' ? LOCK_SPIN : LOCK_BLOCK;
    u8.set(job, H.jobBytes);
    i32[H.magic] = MAGIC;
    // Everything above is published by this store (release); attachers wait for STATE_READY.
    Atomics.store(i32, H.state, STATE_READY);
    const seg = new ShmSegment(name, opts.job, index, layout, handle, true);
    seg.claimSlot(opts.unlinkWhenAllAttached ?? true);
    return seg;
  }

  /** Attach to an existing segment by name, checking its header against what we expect. */
  static async attach(opts: AttachOptions): Promise<ShmSegment> {
    const name = resolveName(opts);
    const job = encodeJob(opts.job);
    const kind = checkKind(opts.buffer);
    const timeoutMs = opts.timeoutMs ?? 0;
    if (!Number.isFinite(timeoutMs) || timeoutMs < 0) {
      throw new ShmError('BAD_ARGS', `timeoutMs must be >= 0, got ${timeoutMs}`);
    }
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = ShmSegment.tryAttach(name, opts.job, job, opts.index, kind, opts);
      if (r instanceof ShmSegment) return r;
      if (Date.now() >= deadline) {
        const waited = timeoutMs > 0 ? ` (waited ${timeoutMs} ms)` : '';
        throw r.failure === 'NOT_FOUND' || r.failure === 'NOT_READY'
          ? new ShmError(r.failure, `${r.message}${waited}`)
          : r;
      }
      if (r.failure !== 'NOT_FOUND' && r.failure !== 'NOT_READY') throw r;
      await new Promise((res) => setTimeout(res, 5));
    }
  }

  private static tryAttach(
    name: string,
    jobId: string,
    job: Uint8Array,
    index: number,
    kind: BufferKind,
    opts: AttachOptions,
  ): ShmSegment | ShmError {
    let handle: NativeHandle;
    try {
      handle = native().open(name, kind, opts.populate ?? false);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'ENOENT') {
        return new ShmError(
          'NOT_FOUND',
          `no shared segment ${name}: its creator has not created it yet, or the job already ended; ` +
            'attach after the creator announced it, or pass timeoutMs to wait for it',
        );
      }
      if (code === 'EEMPTY') {
        return new ShmError('NOT_READY', `shared segment ${name} is still being created`);
      }
      return systemError(err, `attaching to shared segment ${name}`);
    }
    const fail = (e: ShmError) => {
      native().close(handle);
      return e;
    };
    if (handle.size < HEADER_BYTES) {
      return fail(
        new ShmError(
          'BAD_SIZE',
          `shared segment ${name} is ${handle.size} bytes, smaller than an @ssi/shm header (${HEADER_BYTES}); it is not one of ours`,
        ),
      );
    }
    const i32 = new Int32Array(handle.buffer);
    const state = Atomics.load(i32, H.state); // acquire: pairs with the creator's STATE_READY
    if (state !== STATE_READY && state !== STATE_BROKEN) {
      if (i32[H.magic] === 0 || i32[H.magic] === MAGIC) {
        return fail(new ShmError('NOT_READY', `shared segment ${name} is still being initialised`));
      }
    }
    if (i32[H.magic] !== MAGIC) {
      return fail(
        new ShmError(
          'BAD_MAGIC',
          `shared segment ${name} is not an @ssi/shm segment (magic 0x${(i32[H.magic]! >>> 0).toString(16)}, expected 0x${MAGIC.toString(16)}); ` +
            'some other program uses this name',
        ),
      );
    }
    if (i32[H.version] !== LAYOUT_VERSION) {
      return fail(
        new ShmError(
          'BAD_LAYOUT',
          `shared segment ${name} has layout version ${i32[H.version]}, this @ssi/shm expects ${LAYOUT_VERSION}; ` +
            'every process of a job must use the same @ssi/shm release',
        ),
      );
    }
    const jobLen = i32[H.jobLength]!;
    const theirs = new Uint8Array(handle.buffer, H.jobBytes, Math.min(jobLen, MAX_JOB_BYTES));
    if (jobLen !== job.length || !theirs.every((b, i) => b === job[i])) {
      return fail(
        new ShmError(
          'WRONG_JOB',
          `shared segment ${name} belongs to job "${new TextDecoder().decode(theirs)}", not "${jobId}"; ` +
            'check the job id, or clean stale segments of this session (ssi-shm-clean)',
        ),
      );
    }
    const size = i32[H.sizeLo]! + (i32[H.sizeLo]! < 0 ? 2 ** 32 : 0) + i32[H.sizeHi]! * 2 ** 32;
    let layout: Layout;
    try {
      layout = computeLayout({
        nprocs: i32[H.nprocs]!,
        shortLimit: i32[H.shortLimit]!,
        poolSize: i32[H.poolBlocks]! * i32[H.poolBlock]!,
        poolBlock: i32[H.poolBlock]!,
      });
    } catch (err) {
      return fail(
        new ShmError(
          'BAD_SIZE',
          `shared segment ${name} has an impossible header (${(err as Error).message})`,
        ),
      );
    }
    if (size !== handle.size || layout.totalSize !== size) {
      return fail(
        new ShmError(
          'BAD_SIZE',
          `shared segment ${name} is ${handle.size} bytes but its header says ${size} (layout needs ${layout.totalSize}); it is truncated or foreign`,
        ),
      );
    }
    if (state === STATE_BROKEN) {
      return fail(
        new ShmError(
          'BROKEN',
          `shared segment ${name} was marked broken: pid ${i32[H.brokenBy]} died holding its pool lock; end the job and clean up (lamclean)`,
        ),
      );
    }
    try {
      checkIndex(index, layout.nprocs);
    } catch (err) {
      return fail(err as ShmError);
    }
    const seg = new ShmSegment(name, jobId, index, layout, handle, false);
    try {
      seg.claimSlot(opts.unlinkWhenAllAttached ?? true);
    } catch (err) {
      return fail(err as ShmError);
    }
    return seg;
  }

  private claimSlot(unlinkWhenAll: boolean): void {
    const base = procLineOffset(this.layout, this.index) >> 2;
    const prev = Atomics.load(this.i32, base + P.pid);
    if (prev !== 0 && prev !== process.pid && isProcessAlive(prev)) {
      throw new ShmError(
        'SLOT_TAKEN',
        `slot ${this.index} of shared segment ${this.name} is already taken by live pid ${prev}; every process needs its own index`,
      );
    }
    if (Atomics.compareExchange(this.i32, base + P.pid, prev, process.pid) !== prev) {
      throw new ShmError(
        'SLOT_TAKEN',
        `slot ${this.index} of shared segment ${this.name} was taken concurrently; every process needs its own index`,
      );
    }
    Atomics.store(this.i32, base + P.state, PROC_ATTACHED);
    const attached = Atomics.add(this.i32, H.attached, 1) + 1;
    if (unlinkWhenAll && attached >= this.layout.nprocs) this.unlink();
  }

  /** How many processes have attached so far (including the creator). */
  get attachedCount(): number {
    return this.closed ? 0 : Atomics.load(this.i32, H.attached);
  }

  /** The pid in slot `index` (0 while not attached). */
  pidOf(index: number): number {
    checkIndex(index, this.layout.nprocs);
    return Atomics.load(this.i32, (procLineOffset(this.layout, index) >> 2) + P.pid);
  }

  /** Has slot `index` closed its endpoint (or never attached)? */
  stateOf(index: number): number {
    return Atomics.load(this.i32, (procLineOffset(this.layout, index) >> 2) + P.state);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Mark the segment unusable (after a process died holding the pool lock). */
  markBroken(pid: number): void {
    if (this.closed) return;
    Atomics.store(this.i32, H.brokenBy, pid);
    Atomics.store(this.i32, H.state, STATE_BROKEN);
  }

  get isBroken(): boolean {
    return !this.closed && Atomics.load(this.i32, H.state) === STATE_BROKEN;
  }

  /** Remove the name (the memory stays mapped in every process that has it). Idempotent. */
  unlink(): boolean {
    if (this.unlinked) return false;
    this.unlinked = true;
    forgetCreated(this.name);
    try {
      return native().unlink(this.name);
    } catch (err) {
      throw systemError(err, `unlinking shared segment ${this.name}`);
    }
  }

  /**
   * Leave the segment: mark our slot closed, unmap (every view on the buffer becomes empty), and,
   * for the creator, unlink the name. Idempotent.
   */
  close(): void {
    if (this.closed) return;
    const base = procLineOffset(this.layout, this.index) >> 2;
    Atomics.store(this.i32, base + P.state, PROC_CLOSED);
    if (this.isCreator) this.unlink();
    this.closed = true;
    native().close(this.handle);
  }
}

function checkIndex(index: number, nprocs: number): void {
  if (!Number.isInteger(index) || index < 0 || index >= nprocs) {
    throw new ShmError(
      'BAD_ARGS',
      `index must be an integer from 0 to ${nprocs - 1} (the process's slot), got ${String(index)}`,
    );
  }
}

function checkKind(kind: BufferKind | undefined): BufferKind {
  const k = kind ?? 'ab';
  if (k !== 'ab' && k !== 'sab') {
    throw new ShmError('BAD_ARGS', `buffer must be 'ab' or 'sab', got ${String(kind)}`);
  }
  return k;
}
