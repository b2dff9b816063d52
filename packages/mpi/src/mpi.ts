import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ParamRegistry, SsiModule, VerboseStream } from '@ssi/core';
import { checkAgreement, createSsiContext, createVerboseStream, isSsiError } from '@ssi/core';
import { withDeadline } from '@ssi/lam';
import { BsendBuffer } from './bsend';
import { CollFramework } from './coll/framework';
import type { CommHost } from './comm';
import { Communicator } from './comm';
import { CommRegistry } from './comm-registry';
import type { ThreadLevel } from './constants';
import {
  CID_SELF,
  CID_WORLD,
  DEFAULT_MAX_CID,
  DEFAULT_MAX_TAG,
  THREAD_MULTIPLE,
  THREAD_SINGLE,
} from './constants';
import type { JobControl } from './control/rank-control';
import type { RankCheckpoints } from './cr/rank-checkpoints';
import { RankCrSetup } from './cr/rank-setup';
import type { CheckpointApi } from './cr/user-api';
import { describeHandoverUse, readDiscoveryHandover } from './discovery-handover';
import { shareInstallationWithDropIns } from './drop-in-peers';
import { Engine } from './engine';
import { ERRORS_ARE_FATAL } from './errhandler';
import { ErrorClass, MpiError } from './errors';
import type { JobRuntime, ProcessInfo } from './job-runtime';
import { keepAlive } from './keep-alive';
import { readMaxNodeRanks } from './launch/job-env';
import { registerMpiParams } from './params';
import { Proc, ProcMode, sortProcs } from './proc';
import { RpiFramework } from './rpi/framework';
import type { RpiLimits } from './rpi/types';
import { runtimeFromEnvironment } from './runtime-from-env';
import { warmUpMessagePaths } from './warm-up';

/** Options of `MPI.init`. */
export interface InitOptions {
  /** Requested thread level (`MPI_Init_thread`); default `THREAD_SINGLE`. */
  threadLevel?: ThreadLevel;
  /** The run-time environment; default: found from the environment the launcher set. */
  runtime?: JobRuntime;
  /** Modules registered by the program itself (found before installed packages). */
  modules?: readonly SsiModule[];
  /** SSI parameters, as `--ssi name value` would give them (e.g. `{ rpi: 'tcp' }`). */
  ssi?: Record<string, string | number | boolean>;
  /** Directories whose `node_modules` are searched for modules (default: cwd, the program's directory, @ssi/mpi's install). */
  searchFrom?: readonly string[];
  /** Environment for parameters (default `process.env`). */
  env?: Record<string, string | undefined>;
}

let current: Mpi | null = null;
let finalizedOnce = false;

const MPI_INSTALL_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function describeError(err: unknown): string {
  if (err instanceof Error) return isSsiError(err) ? err.message : (err.stack ?? err.message);
  return String(err);
}

/**
 * One initialized MPI library in a process: `COMM_WORLD`, `COMM_SELF`, the selected rpi module
 * and everything of `MPI_Init` … `MPI_Finalize`. Made by `MPI.init()`.
 */
export class Mpi implements CommHost {
  /** All processes of the job. */
  COMM_WORLD!: Communicator;
  /** Just this process. */
  COMM_SELF!: Communicator;
  /** The thread level provided (`MPI_Query_thread`). */
  threadLevel: ThreadLevel = THREAD_SINGLE;
  /** Name of this process's node (`MPI_Get_processor_name`). */
  processorName = '';
  /** The selected rpi module. */
  rpi = { name: '', version: '' };
  /** Largest valid tag (`MPI_TAG_UB`). */
  maxTag = DEFAULT_MAX_TAG;
  /** Parameters of this process (SSI and MPI). */
  params!: ParamRegistry;

  /** @internal */
  engine!: Engine;
  /** @internal Context ids: 0 and 1 are COMM_WORLD's and COMM_SELF's. */
  readonly contexts = { nextCid: 2 };
  /** @internal */
  collFramework!: CollFramework;
  /** @internal The live communicators. */
  readonly registry = new CommRegistry();
  private framework: RpiFramework | null = null;
  private attached: BsendBuffer | null = null;
  private state: 'init' | 'running' | 'finalizing' | 'finalized' = 'init';
  private aborting = false;
  /** The abort is the consequence of another process's loss (a lost connection to it). */
  private abortFollowsPeerLoss = false;
  private verbose!: VerboseStream;
  private readonly cleanups: (() => void)[] = [];
  /** Checkpoint/restart of this program (`mpi.cr`): handlers, critical sections, requests. */
  cr!: CheckpointApi;
  private checkpoints: RankCheckpoints | null = null;

  private constructor(readonly runtime: JobRuntime) {}

  /**
   * Initializes MPI (`MPI_Init_thread`): reads the SSI parameters, selects the rpi module, takes
   * part in the GPS exchange through the launcher, checks that every rank selected the same rpi
   * module and version, and sets up point-to-point communication with every process.
   *
   * Errors during init are fatal: the whole job is aborted with a message naming the ranks.
   */
  static async init(options: InitOptions = {}): Promise<Mpi> {
    if (current) {
      throw new MpiError(ErrorClass.ERR_OTHER, 'MPI.init called twice; MPI is already initialized');
    }
    if (finalizedOnce) {
      throw new MpiError(ErrorClass.ERR_OTHER, 'MPI.init after MPI.finalize: MPI cannot restart');
    }
    keepAlive.hold(); // until init is done: the connections it waits on are unref'd
    try {
      const runtime = options.runtime ?? (await runtimeFromEnvironment(options.env));
      const mpi = new Mpi(runtime);
      current = mpi;
      try {
        await mpi.start(options);
      } catch (err) {
        await mpi.abortJob(
          err instanceof MpiError ? err.errorClass : 1,
          `MPI.init failed on rank ${runtime.rank}: ${describeError(err)}`,
        );
      }
      return mpi;
    } finally {
      keepAlive.release();
    }
  }

  /** Whether `MPI.init` has completed in this process (`MPI_Initialized`). */
  static initialized(): boolean {
    return current !== null && current.state !== 'init';
  }

  /** Whether `MPI.finalize` has completed in this process (`MPI_Finalized`). */
  static finalized(): boolean {
    return finalizedOnce;
  }

  /** The initialized instance, if any. */
  static current(): Mpi | null {
    return current;
  }

  private async start(options: InitOptions): Promise<void> {
    const runtime = this.runtime;
    const env = options.env ?? process.env;
    const argv: string[] = [];
    for (const [k, v] of Object.entries(options.ssi ?? {})) argv.push('--ssi', k, String(v));
    const appDir = process.argv[1] ? dirname(resolve(process.argv[1])) : process.cwd();
    const handover = readDiscoveryHandover(env);
    const ctx = createSsiContext({
      argv,
      env,
      packagesIn: handover.packagesIn,
      searchFrom: options.searchFrom ?? [process.cwd(), appDir, MPI_INSTALL_DIR],
      staticModules: options.modules,
    });
    shareInstallationWithDropIns(ctx.discovery.modules);
    this.params = ctx.params;
    registerMpiParams(ctx.params);
    if (ctx.params.get<boolean>('mpi_base_abort_on_unhandled')) this.installProcessHandlers();
    const write = (line: string) => process.stderr.write(`[rank ${runtime.rank}] ${line}\n`);
    this.verbose = createVerboseStream(ctx.params, 'mpi', write);
    for (const p of ctx.discovery.problems) this.verbose.log(0, `warning: ${p.message}`);
    for (const line of describeHandoverUse(handover)) this.verbose.log(1, line);
    const timeout = ctx.params.get<number>('mpi_base_init_timeout');

    // rpi selection in every rank (Ch. 5.1.3).
    const requested = options.threadLevel ?? THREAD_SINGLE;
    this.framework = new RpiFramework(ctx, write);
    const choice = await this.framework.select({
      params: ctx.params,
      threadLevel: requested,
      size: runtime.size,
      host: runtime.host,
      maxNodeRanks: readMaxNodeRanks(env),
    });
    this.rpi = { name: choice.name, version: choice.version };
    this.threadLevel = Math.min(
      Math.max(requested, choice.answer.threadMin),
      choice.answer.threadMax,
      THREAD_MULTIPLE,
    ) as ThreadLevel;

    // Checkpoint/restart (Ch. 7): a crmpi module when asked for; a restarted rank reads its part.
    const cr = await RankCrSetup.open(ctx, write, env, runtime.rank);

    // GPS exchange through the launcher (Ch. 5.1.2), with what each rank selected.
    const mine: ProcessInfo = {
      gps: runtime.gps,
      host: runtime.host,
      processorName: runtime.nodeName,
      // Every job-wide framework's choice goes here: ranks must agree on each.
      modules: { rpi: { name: choice.name, version: choice.version, origin: choice.origin } },
    };
    cr.describe(mine);
    const all = await withTimeout(runtime.allgather(mine), timeout, 'the GPS exchange');
    checkAgreement(
      all.map((info) => ({
        who: `rank ${info.gps.grank} (node ${info.gps.node}, pid ${info.gps.pid})`,
        modules: info.modules,
      })),
    );
    const procs = sortProcs(all.map((info) => new Proc(info.gps, info.host, info.processorName)));
    const myProc = procs.find((p) => p.gps.grank === runtime.rank);
    if (!myProc) {
      throw new MpiError(
        ErrorClass.ERR_INTERN,
        `the GPS exchange did not include rank ${runtime.rank}`,
      );
    }
    this.processorName = runtime.nodeName;
    await this.framework.keepOnly(choice.name);

    // Initialize the selected module with the process list.
    const engine = new Engine(
      procs,
      myProc,
      runtime,
      ctx.params,
      createVerboseStream(ctx.params, 'rpi', write),
    );
    engine.moduleName = choice.name;
    cr.attach(engine, all);
    engine.onPeerFailed = (_proc, error) => this.peerFailed(error);
    const rpiFramework = this.framework;
    engine.openModule = (name) => rpiFramework.openByName(name);
    this.engine = engine;
    const limits: RpiLimits = { maxTag: DEFAULT_MAX_TAG, maxCid: DEFAULT_MAX_CID };
    const actions = await withTimeout(
      choice.module.init(procs.slice(), limits, engine),
      timeout,
      `the ${choice.name} rpi module's connection set-up`,
    );
    engine.actions = actions;
    engine.fast = ctx.params.get<boolean>('rpi_base_fast');
    for (const p of procs) p.mode |= ProcMode.RPI_INIT;
    this.maxTag = Math.min(limits.maxTag, DEFAULT_MAX_TAG);

    // The predefined communicators (Fig. 5.1: communicator → group → process entries).
    const worldProcs = [...procs].sort((a, b) => a.gps.grank - b.gps.grank);
    for (const p of worldProcs) p.refcount++;
    myProc.refcount++;
    this.collFramework = new CollFramework(ctx, write);
    this.COMM_WORLD = new Communicator(this, CID_WORLD, worldProcs, runtime.rank, 'COMM_WORLD');
    this.COMM_SELF = new Communicator(this, CID_SELF, [myProc], 0, 'COMM_SELF');
    this.registry.add(this.COMM_WORLD);
    this.registry.add(this.COMM_SELF);
    await warmUpMessagePaths(this.COMM_SELF, ctx.params, this.verbose);
    const started = await cr.start({
      ctx,
      engine,
      runtime,
      communicators: () => this.registry.list(),
      verbose: (level, message) => this.verbose.log(level, message),
    });
    this.cr = started.api;
    this.checkpoints = started.checkpoints;
    this.state = 'running';
    this.verbose.log(1, engine.pollChoice.reason);
    this.verbose.log(
      10,
      `initialized: rank ${runtime.rank} of ${runtime.size}, rpi ${choice.name} ${choice.version}`,
    );
  }

  /**
   * The job control channel to `mpirun` (`JobControl`): `send(type, payload)`, `on(type, handler)`,
   * `ask(type, payload, timeoutMs)`. Types are namespaced (`cr.checkpoint`, `tool.progress`).
   */
  get control(): JobControl {
    return this.runtime.control;
  }

  // ---- CommHost --------------------------------------------------------------------------

  /** @internal */
  bsendBuffer(): BsendBuffer | null {
    return this.attached;
  }

  /** @internal ERRORS_ARE_FATAL. */
  fatal(comm: Communicator, error: MpiError, call: string): void {
    const where = `rank ${this.runtime.rank} in ${comm.name}.${call}`;
    void this.abortJob(
      error.errorClass || 1,
      `MPI error on ${where}: ${error.className}: ${error.message}\n` +
        `(the error handler of ${comm.name} is ERRORS_ARE_FATAL: aborting the job; set ` +
        `comm.errhandler = MPI.ERRORS_RETURN to handle errors yourself)`,
    );
  }

  /**
   * Aborts the whole job (`MPI_Abort`): every process is killed and the launcher exits with
   * `code`, printing `message`. The promise never settles.
   */
  abort(code = 1, message?: string): Promise<never> {
    return this.abortJob(code, message ?? `rank ${this.runtime.rank}: abort(${code}) called`);
  }

  private peerFailed(error: MpiError): void {
    if (this.state !== 'running') return;
    const world = this.COMM_WORLD;
    if (world.errhandler === ERRORS_ARE_FATAL) {
      this.abortFollowsPeerLoss = true;
      this.fatal(world, error, 'progress');
    } else world.errhandler.fn?.(world, error);
  }

  /** Ends the job: message to stderr and to the launcher, which kills every process. */
  private abortJob(code: number, message: string): Promise<never> {
    if (!this.aborting) {
      this.aborting = true;
      process.stderr.write(`${message}\n`);
      const details = { peerLost: this.abortFollowsPeerLoss };
      void this.runtime.abort(code, message, details).catch(() => process.exit(code || 1));
    }
    return new Promise<never>(() => {});
  }

  // ---- process-level safety nets -----------------------------------------------------------

  private installProcessHandlers(): void {
    const rank = this.runtime.rank;
    const onRejection = (reason: unknown) => {
      void this.abortJob(1, `rank ${rank}: unhandled rejection: ${describeError(reason)}`);
    };
    const onException = (err: unknown) => {
      void this.abortJob(1, `rank ${rank}: uncaught exception: ${describeError(err)}`);
    };
    const onExit = (code: number) => {
      if (this.state !== 'finalized' && !this.aborting) {
        process.stderr.write(
          `rank ${rank}: the process is exiting (code ${code}) without calling MPI.finalize; ` +
            `the job is incomplete\n`,
        );
        if (!code) process.exitCode = 1;
      }
    };
    process.on('unhandledRejection', onRejection);
    process.on('uncaughtException', onException);
    process.on('exit', onExit);
    this.cleanups.push(() => {
      process.off('unhandledRejection', onRejection);
      process.off('uncaughtException', onException);
      process.off('exit', onExit);
    });
  }

  // ---- environment queries -----------------------------------------------------------------

  /**
   * The live communicators, oldest first: COMM_WORLD, COMM_SELF and every communicator the
   * program built and has not freed.
   */
  communicators(): Communicator[] {
    return this.registry.list();
  }

  /** The thread level provided (`MPI_Query_thread`). */
  queryThread(): ThreadLevel {
    return this.threadLevel;
  }

  /** Whether the caller is the main thread (`MPI_Is_thread_main`): always, in one event loop. */
  isThreadMain(): boolean {
    return true;
  }

  // ---- buffered-send buffer --------------------------------------------------------------

  /**
   * Attaches the buffer buffered sends copy into (`MPI_Buffer_attach`): a size in bytes (the
   * library allocates it) or your own memory. Size it as the sum of the messages that may be in
   * flight plus `BSEND_OVERHEAD` per message. One buffer at a time.
   */
  attachBuffer(buffer: number | ArrayBufferView): void {
    if (this.attached) {
      throw this.COMM_WORLD.raiseSync(
        new MpiError(
          ErrorClass.ERR_BUFFER,
          `a buffer of ${this.attached.size} bytes is already attached; detach it first`,
        ),
        'attachBuffer',
      );
    }
    const memory =
      typeof buffer === 'number'
        ? Buffer.allocUnsafeSlow(buffer)
        : new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    this.attached = new BsendBuffer(memory);
  }

  /**
   * Detaches the buffer (`MPI_Buffer_detach`) once every buffered message in it has been
   * transmitted; resolves with the memory.
   */
  async detachBuffer(): Promise<Uint8Array | undefined> {
    const buffer = this.attached;
    if (!buffer) return undefined;
    await buffer.drained();
    this.attached = null;
    return buffer.memory;
  }

  // ---- finalize and abort ------------------------------------------------------------------

  /**
   * Finalizes MPI (`MPI_Finalize`): waits for buffered sends to be transmitted, synchronizes
   * with every other rank, and shuts the rpi module down. All communication the program
   * started must be complete.
   */
  async finalize(): Promise<void> {
    if (this.state !== 'running') {
      throw new MpiError(
        ErrorClass.ERR_OTHER,
        this.state === 'finalized' ? 'MPI.finalize called twice' : 'MPI.finalize before MPI.init',
      );
    }
    const engine = this.engine;
    await engine.gate.call(() => Promise.resolve());
    await this.checkpoints?.closeWindow();
    this.state = 'finalizing';
    if (this.attached) await this.attached.drained();
    const pending = engine.active();
    if (pending.length > 0) {
      this.verbose.log(
        0,
        `warning: MPI.finalize with ${pending.length} request(s) still active: ` +
          pending
            .slice(0, 5)
            .map((r) => r.describe())
            .join('; '),
      );
    }
    engine.finalizing = true;
    keepAlive.hold();
    try {
      await this.finalizeWithRuntime(engine);
    } finally {
      keepAlive.stop();
    }
  }

  private async finalizeWithRuntime(engine: Engine): Promise<void> {
    await this.runtime.allgather(null);
    await engine.actions.finalize();
    await this.collFramework.close();
    await this.framework?.close();
    this.state = 'finalized';
    finalizedOnce = true;
    for (const c of this.cleanups) c();
    await this.runtime.finalize();
  }

  // ---- checkpoint / restart (for the crmpi framework base) -------------------------------

  /**
   * The rpi checkpoint quartet with the entry gate, for the checkpoint/restart framework:
   * `interrupt` closes the gate (MPI calls wait), `continue`/`restart` open it again, and calls
   * made meanwhile proceed in order.
   */
  get checkpointHooks() {
    const e = this.engine;
    return {
      supported: e.quartet.supported,
      interrupt: () => e.quartet.interrupt(),
      checkpoint: () => e.quartet.checkpoint(),
      continue: () => e.quartet.continue(),
      restart: () => e.quartet.restart(),
    };
  }
}

/** Bounds a wait of MPI.init by mpi_base_init_timeout (0: no bound). */
function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  if (!(ms > 0)) return p;
  return withDeadline(
    p,
    ms,
    () =>
      new MpiError(
        ErrorClass.ERR_OTHER,
        `timed out after ${ms} ms waiting for ${what} (mpi_base_init_timeout)`,
      ),
  );
}
