import { Packr } from 'msgpackr/pack';
import { ErrorClass, MpiError } from '../errors';
import type { CheckpointSection } from './types';

const packr = new Packr({ useRecords: false });

/** Where a program writes its state at a checkpoint (`onCheckpoint(store => store.put(...))`). */
export interface CheckpointWriter {
  /** Saves `value` under `name`: bytes as they are, anything else msgpackr-encoded. */
  put(name: string, value: unknown): void;
}

/** A restarted program's saved state (`mpi.cr.state`). */
export interface CheckpointReader {
  /** The value saved under `name` (decoded as it was put), or undefined. */
  get<T = unknown>(name: string): T | undefined;
  has(name: string): boolean;
  readonly names: readonly string[];
}

/**
 * Where the time of one checkpoint went, in ms (mpirun's clock unless said otherwise). `ms` of the
 * outcome is their sum plus the control messages' delivery: prepare → saved → commit.
 */
export interface CheckpointPhases {
  /** The crlam module's `beginSeries` and PREPARE until every rank interrupted (gate closed). */
  prepareMs: number;
  /** GO until every rank's SAVED arrived: every rank drained and its module's save done. */
  savedMs: number;
  /** The slowest rank's drain (rpi + coll modules), on that rank's clock. */
  drainMs: number;
  /** The slowest rank's save (the crmpi module's `checkpoint`), on that rank's clock. */
  saveMs: number;
  /** The slowest rank's drain + save, on that rank's clock. */
  drainSaveMs: number;
  /** The crlam module's `commitSeries` (manifest written durably, keep rule applied). */
  commitMs: number;
}

/** What `mpi.cr.checkpoint()` answers. */
export type CheckpointOutcome =
  | { ok: true; series: number; ms: number; bytes: number; dir: string; phases: CheckpointPhases }
  | { ok: false; reason: string };

type Handler<A extends unknown[]> = (...args: A) => void | Promise<void>;

const APP_PREFIX = 'app:';
const RAW = 0;
const PACKED = 1;

/**
 * The checkpoint/restart API of a program (`mpi.cr`): what to do at checkpoint, continue and
 * restart, critical sections, application-initiated checkpoints and safe points (the `self`
 * module's user side, the AVS seed's block/unblock and preempt). Present in every program; with no
 * cr module selected `enabled` is false and `checkpoint()` answers why.
 */
export class CheckpointApi {
  private readonly onCheckpoints: Handler<[CheckpointWriter]>[] = [];
  private readonly onContinues: Handler<[]>[] = [];
  private readonly onDrains: Handler<[string]>[] = [];
  private drainReason: string | null = null;
  private blocks = 0;
  private unblocked: (() => void) | null = null;
  private lastYield = performance.now();

  /** @internal */
  constructor(
    /** The selected cr module, or '' when the job is not checkpointable by any module. */
    readonly module: string,
    /** The saved state when this process was restarted from a checkpoint, else null. */
    readonly state: CheckpointReader | null,
    /** The series this process was restarted from (0 when not restarted). */
    readonly restartedFrom: number,
    /** Asks mpirun for a checkpoint (mpirun counts each rank's calls: the k-th ones are one). */
    private readonly ask: () => Promise<CheckpointOutcome>,
    /** How long a computing rank may go without yielding in `safePoint` (ms). */
    private readonly safePointMs: number,
  ) {}

  /** A cr module is selected: the job can be checkpointed (when its rpi and coll modules can). */
  get enabled(): boolean {
    return this.module !== '';
  }

  /** This process was restarted from a checkpoint (its state is in `state`). */
  get restarted(): boolean {
    return this.state !== null;
  }

  /** Called at every checkpoint, while MPI is held: write the program's state (no MPI calls). */
  onCheckpoint(fn: Handler<[CheckpointWriter]>): () => void {
    return register(this.onCheckpoints, fn, 'onCheckpoint');
  }

  /** Called after every checkpoint in the process that took it (MPI usable again). */
  onContinue(fn: Handler<[]>): () => void {
    return register(this.onContinues, fn, 'onContinue');
  }

  /**
   * Asks for a checkpoint of the whole job; resolves once the series is complete (or refused).
   * Collective: every rank calls it, and every rank's k-th call resolves with the same series (the
   * first k-th call starts it, so a rank that calls later may be saved before its call: set what
   * the checkpoint must hold before calling).
   */
  checkpoint(): Promise<CheckpointOutcome> {
    if (!this.enabled) {
      return Promise.resolve({
        ok: false,
        reason: 'no cr module is selected: run with --ssi cr self to make the job checkpointable',
      });
    }
    return this.ask();
  }

  /**
   * The job must stop soon (PSC's drain, `tcs_drainoperation_`; AVS's preempt): mpirun got
   * `lamcheckpoint --preempt` or SIGTERM. A checkpoint of the job follows at once, then the job
   * ends with status 75 ("checkpointed, restart me"). A long computation polls this flag (after
   * `await mpi.cr.safePoint()`) to stop starting new work; it stays true once set.
   */
  get draining(): boolean {
    return this.drainReason !== null;
  }

  /** Why the job is draining (`'lamcheckpoint --preempt'`, `'SIGTERM'`), or null. */
  get drainCause(): string | null {
    return this.drainReason;
  }

  /**
   * Called once when the drain notice arrives, with its cause (before the checkpoint that
   * follows it); called at once when the job is already draining. Returns the unsubscribe.
   */
  onDrain(fn: Handler<[string]>): () => void {
    const off = register(this.onDrains, fn, 'onDrain');
    if (this.drainReason !== null) void runHandler(fn, this.drainReason);
    return off;
  }

  /** @internal mpirun's drain notice (`cr.drain`) arrived. */
  drainNotice(reason: string): void {
    if (this.drainReason !== null) return;
    this.drainReason = reason;
    for (const fn of [...this.onDrains]) void runHandler(fn, reason);
  }

  /** Starts a critical section (nestable): a checkpoint that has not reached this rank waits. */
  block(): void {
    this.blocks++;
  }

  /** Ends a critical section; the outermost end lets a waiting checkpoint in. */
  unblock(): void {
    if (this.blocks === 0) {
      throw new MpiError(ErrorClass.ERR_OTHER, 'mpi.cr.unblock() without a matching block()');
    }
    if (--this.blocks === 0) {
      const go = this.unblocked;
      this.unblocked = null;
      go?.();
    }
  }

  /** Inside a critical section. */
  get blocked(): boolean {
    return this.blocks > 0;
  }

  /**
   * A safe point for a rank that computes without MPI calls or awaits: yields to the event loop
   * (where a checkpoint request is heard) at most every `crmpi_base_safepoint_ms`, else returns at
   * once. `if (i % 1000 === 0) await mpi.cr.safePoint()` costs one clock read per call.
   */
  safePoint(): Promise<void> | undefined {
    const now = performance.now();
    if (now - this.lastYield < this.safePointMs) return undefined;
    this.lastYield = now;
    return new Promise<void>((resolve) => setImmediate(resolve));
  }

  /** @internal Runs `go` now, or when the outermost critical section ends. */
  whenUnblocked(go: () => void): void {
    if (this.blocks === 0) go();
    else this.unblocked = go;
  }

  /** @internal A checkpoint that waited for the critical section was withdrawn. */
  forgetWaiting(): void {
    this.unblocked = null;
  }

  /** @internal The program's sections of a checkpoint. */
  async collectSections(): Promise<CheckpointSection[]> {
    const sections: CheckpointSection[] = [];
    const names = new Set<string>();
    const writer: CheckpointWriter = {
      put(name, value) {
        if (typeof name !== 'string' || name === '' || names.has(name)) {
          throw new MpiError(
            ErrorClass.ERR_ARG,
            `checkpoint store.put: the name must be a non-empty string used once, got ${JSON.stringify(name)}`,
          );
        }
        names.add(name);
        sections.push({ name: APP_PREFIX + name, bytes: encodeEntry(value) });
      },
    };
    for (const fn of this.onCheckpoints) await fn(writer);
    return sections;
  }

  /** @internal */
  async fireContinue(): Promise<void> {
    for (const fn of this.onContinues) await fn();
  }
}

/** A drain handler's failure is reported, not thrown into the control channel's dispatch. */
async function runHandler(fn: Handler<[string]>, reason: string): Promise<void> {
  try {
    await fn(reason);
  } catch (err) {
    process.emitWarning(`mpi.cr.onDrain handler failed: ${(err as Error)?.message ?? err}`);
  }
}

function register<F>(list: F[], fn: F, what: string): () => void {
  if (typeof fn !== 'function') {
    throw new MpiError(ErrorClass.ERR_ARG, `mpi.cr.${what}: the handler is not a function`);
  }
  list.push(fn);
  return () => {
    const i = list.indexOf(fn);
    if (i >= 0) list.splice(i, 1);
  };
}

function encodeEntry(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) {
    const out = new Uint8Array(value.byteLength + 1);
    out[0] = RAW;
    out.set(value, 1);
    return out;
  }
  const packed = packr.pack(value);
  const out = new Uint8Array(packed.byteLength + 1);
  out[0] = PACKED;
  out.set(packed, 1);
  return out;
}

/** The reader of a restarted program's sections (those the program put, not the MPI layer's). */
export function readerOf(sections: ReadonlyMap<string, Uint8Array>): CheckpointReader {
  const entries = new Map<string, Uint8Array>();
  for (const [name, bytes] of sections) {
    if (name.startsWith(APP_PREFIX)) entries.set(name.slice(APP_PREFIX.length), bytes);
  }
  return {
    get<T>(name: string): T | undefined {
      const bytes = entries.get(name);
      if (bytes === undefined || bytes.byteLength === 0) return undefined;
      const body = bytes.subarray(1);
      return (bytes[0] === RAW ? new Uint8Array(body) : packr.unpack(body)) as T;
    },
    has: (name) => entries.has(name),
    names: [...entries.keys()],
  };
}
