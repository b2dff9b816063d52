import type { CollActions } from '../coll/types';
import type { Communicator } from '../comm';
import type { JobControl } from '../control/rank-control';
import type { Engine } from '../engine';
import type { JobContact, JobRuntime, ProcLocation } from '../job-runtime';
import { keepAlive } from '../keep-alive';
import { takeImage } from './image';
import type { RankChannel, StoragePlan } from './store';
import { type CheckpointPoint, CrMessage, type CrmpiActions, type SavedRank } from './types';
import type { CheckpointApi } from './user-api';

/** How often a frozen rank after its job's last series looks for a new job adopting it. */
const ADOPTION_POLL_MS = 200;
/** How long (running time) it looks once its lamd is gone, before it exits. */
const ADOPTION_WAIT_AFTER_LOSS_MS = 30_000;

/** The handler states of the cr report (§3.2): no request, a request waiting, the handler running. */
export type HandlerState = 'IDLE' | 'WAITING' | 'RUNNING';

interface Prepare {
  series: number;
  dir: string;
  attempt: number;
  storage?: StoragePlan;
}

/**
 * A rank's side of the cr base (the crmpi framework's base functions, Ch. 7.2): hears mpirun's
 * checkpoint messages and runs the phases over the rpi and every live communicator's coll
 * modules — interrupt (the entry gate closes: MPI calls wait and proceed in order afterwards),
 * checkpoint (the rpi drains the network; the coll modules prepare), the crmpi module's save,
 * then continue. A critical section (`mpi.cr.block()`) keeps the request WAITING.
 */
export class RankCheckpoints {
  state: HandlerState = 'IDLE';
  private prepared: Prepare | null = null;
  /** The newest attempt mpirun withdrew (an interrupt still under way for it is undone). */
  private retreatedAttempt = 0;
  private finalizing = false;
  private queue: Promise<void> = Promise.resolve();
  private readonly off: (() => void)[] = [];

  constructor(
    private readonly args: {
      engine: Engine;
      control: JobControl;
      communicators: () => Communicator[];
      module: CrmpiActions;
      moduleName: string;
      api: CheckpointApi;
      /** The job's runtime: its id (a new one after adoption) and `adoption`. */
      runtime: Pick<JobRuntime, 'jobId' | 'adoption' | 'allgather' | 'gps' | 'host' | 'nodeName'>;
      rank: number;
      size: number;
      /** out-of-band messages between ranks, for a storage plan's work during a checkpoint */
      channel: RankChannel;
      verbose(level: number, message: string): void;
    },
  ) {}

  /** Registers the handlers and tells mpirun whether this rank can be checkpointed. */
  async start(): Promise<void> {
    const c = this.args.control;
    this.off.push(
      c.on(CrMessage.PREPARE, (p) => this.inOrder(() => this.onPrepare(p as Prepare))),
      c.on(CrMessage.RETREAT, (p) =>
        this.inOrder(() => this.onRetreat((p as { attempt: number }).attempt)),
      ),
      c.on(CrMessage.GO, (p) => this.inOrder(() => this.onGo(p as Prepare))),
      // Not in order behind the phases: the program is told at once, before the PREPARE behind it.
      c.on(CrMessage.DRAIN, (p) =>
        this.args.api.drainNotice(String((p as { reason?: unknown })?.reason ?? 'drain')),
      ),
      c.on(CrMessage.DONE, (p) =>
        this.inOrder(() =>
          this.onDone(p as { series: number; committed: boolean; restore?: boolean }),
        ),
      ),
    );
    await this.announce();
  }

  /** Tells mpirun whether this rank can be checkpointed (again after an adoption: a new mpirun). */
  private async announce(): Promise<void> {
    const why = await this.whyNotCheckpointable();
    await this.args.control.send(CrMessage.READY, {
      module: this.args.moduleName,
      checkpointable: why === null,
      reason: why ?? undefined,
    });
  }

  /**
   * Runs the handling of one message from mpirun after the previous one has finished: the phases
   * are asynchronous, and a rank that was busy receives a late PREPARE, its RETREAT and the next
   * PREPARE together; interleaved, a retreat could run before the interrupt it undoes (leaving
   * the gate closed) or an interrupt before the previous continue. Failures reach the control
   * channel's report (and the next message is still handled).
   */
  private inOrder(step: () => Promise<void> | void): Promise<void> {
    const run = this.queue.then(step);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Finalize started: no checkpoint can be taken from now on. */
  async closeWindow(): Promise<void> {
    this.finalizing = true;
    await this.args.control.send(CrMessage.FINALIZING, {}).catch(() => {});
    for (const off of this.off) off();
    // The module's work after a checkpoint (a copy to the file server) ends before the rank does.
    await this.args.module.finalize?.();
  }

  /** Why the job cannot be checkpointed here now (rpi or coll modules), or null. */
  async whyNotCheckpointable(): Promise<string | null> {
    const engine = this.args.engine;
    if (!engine.quartet.supported) {
      return `the rpi \`${engine.moduleName}\` cannot checkpoint: run with --ssi rpi crtcp`;
    }
    for (const comm of this.args.communicators()) {
      const setup = await comm.selectedCollectives;
      if (!setup) continue;
      const bad = setup.initialized.find((m) => !m.hasCheckpoint);
      if (bad) {
        return `the coll module \`${bad.name}\` of ${comm.name} cannot checkpoint: select checkpointable coll modules`;
      }
    }
    return null;
  }

  private async onPrepare(p: Prepare): Promise<void> {
    if (this.finalizing) {
      await this.reply(p.attempt, 'finalize has started on this rank');
      return;
    }
    if (!this.args.api.blocked) return this.interrupt(p);
    // In a critical section: the request waits for the outermost unblock (or its retreat).
    this.state = 'WAITING';
    this.args.api.whenUnblocked(() => void this.inOrder(() => this.interrupt(p)));
  }

  private async interrupt(p: Prepare): Promise<void> {
    this.state = 'RUNNING';
    const why = await this.whyNotCheckpointable();
    if (why !== null) {
      this.state = 'IDLE';
      await this.reply(p.attempt, why);
      return;
    }
    // Until continue, calls wait at the closed gate and the control channel is unref'd: nothing
    // else would keep a rank whose program only waits on MPI alive.
    keepAlive.hold();
    await this.args.engine.quartet.interrupt();
    await this.eachColl((a, comm) => a.interrupt?.(comm));
    this.prepared = p;
    // mpirun gave up on this attempt while this rank was getting ready: go on as before.
    if (p.attempt <= this.retreatedAttempt) await this.onRetreat(p.attempt);
    else await this.reply(p.attempt, null);
  }

  private reply(attempt: number, refused: string | null): Promise<void> {
    return this.args.control.send(CrMessage.PREPARED, { attempt, refused: refused ?? undefined });
  }

  private async onRetreat(attempt: number): Promise<void> {
    this.retreatedAttempt = Math.max(this.retreatedAttempt, attempt);
    if (this.prepared?.attempt !== attempt) {
      // Still waiting in a critical section: forget the request (mpirun asks again).
      if (this.state === 'WAITING') this.args.api.forgetWaiting();
      this.state = 'IDLE';
      return;
    }
    this.prepared = null;
    await this.eachColl((a, comm) => a.continue?.(comm));
    await this.args.engine.quartet.continue();
    keepAlive.release();
    this.state = 'IDLE';
  }

  private async onGo(p: Prepare): Promise<void> {
    const { engine, rank, size, runtime } = this.args;
    const point: CheckpointPoint = {
      jobId: runtime.jobId,
      series: p.series,
      dir: p.dir,
      rank,
      size,
      storage: p.storage,
    };
    const t0 = performance.now();
    let saved: SavedRank | undefined;
    let error: string | undefined;
    let drainMs = 0;
    let restored = false;
    try {
      await engine.quartet.checkpoint();
      await this.eachColl((a, comm) => a.checkpoint?.(comm));
      drainMs = performance.now() - t0;
      const image = takeImage({
        procs: engine.procs,
        myProc: engine.myProc,
        log: engine.crLog!,
        active: engine.active(),
        unexpected: engine.matcher.unexpected(),
      });
      saved = await this.args.module.checkpoint({
        point,
        image,
        applicationSections: () => this.args.api.collectSections(),
        nodeOf: nodesByRank(engine.procs),
        channel: this.args.channel,
      });
      restored = this.args.module.restored?.(p.series) === true;
      // A process image dumped during this checkpoint and restored in a new job resumes here.
      const contact = await this.args.module.newJob?.(p.series);
      if (contact) return this.adoptOrExit(p.series, contact);
    } catch (err) {
      error = `rank ${rank}: ${(err as Error).message}`;
      this.args.verbose(0, `checkpoint series ${p.series} failed: ${error}`);
    }
    await this.args.control.send(CrMessage.SAVED, {
      series: p.series,
      saved,
      error,
      drainMs,
      saveMs: performance.now() - t0 - drainMs,
      restored: restored || undefined,
    });
  }

  private async onDone(d: {
    series: number;
    committed: boolean;
    restore?: boolean;
    stop?: boolean;
  }): Promise<void> {
    this.prepared = null;
    // The series ends the job: frozen as saved until killed, or adopted by a new job.
    if (d.stop === true && d.committed) return this.stayFrozen(d.series);
    await this.eachColl((a, comm) => a.continue?.(comm));
    // A rank was restored from its image (system-level checkpointer): every rank reconnects.
    if (d.restore === true) await this.args.engine.quartet.restart();
    else await this.args.engine.quartet.continue();
    keepAlive.release();
    await this.args.module.continue?.(d.series, d.committed);
    this.state = 'IDLE';
    await this.args.api.fireContinue();
  }

  /**
   * After the job's last series: the rank does not continue (nothing runs after the image that
   * its restored copy would do again). With a module that can be restored into a new job, it
   * waits for that job's contact — asked every ADOPTION_POLL_MS, so a process stopped and
   * resumed meanwhile finds it at once — for as long as its job lives, and for
   * ADOPTION_WAIT_AFTER_LOSS_MS of running time once its lamd is gone.
   */
  private async stayFrozen(series: number): Promise<void> {
    const { module, runtime, verbose } = this.args;
    const adoption = runtime.adoption;
    verbose(10, `series ${series} ends the job: this rank stays as it was saved`);
    if (!module.newJob || !adoption) return;
    adoption.mayOutliveJob();
    let waitedSinceLoss = 0;
    for (;;) {
      const contact = await module.newJob(series).catch((err: Error) => {
        process.stderr.write(`rank ${this.args.rank}: no usable contact: ${err.message}\n`);
        return process.exit(1);
      });
      if (contact) return this.adoptOrExit(series, contact);
      if (adoption.lost) waitedSinceLoss += ADOPTION_POLL_MS;
      if (waitedSinceLoss >= ADOPTION_WAIT_AFTER_LOSS_MS) {
        process.stderr.write(
          `rank ${this.args.rank}: the job ended after series ${series} and no new job adopted this process within ${ADOPTION_WAIT_AFTER_LOSS_MS / 1000} s; exiting\n`,
        );
        process.exit(1);
      }
      await new Promise((r) => setTimeout(r, ADOPTION_POLL_MS));
    }
  }

  /** A process that cannot join the job restoring it has no job left: it says why and exits. */
  private async adoptOrExit(series: number, contact: JobContact): Promise<void> {
    try {
      await this.adopt(series, contact);
    } catch (err) {
      process.stderr.write(
        `rank ${this.args.rank}: restored from series ${series} but cannot join the new job: ${(err as Error).message}\n`,
      );
      process.exit(1);
    }
  }

  /**
   * The restore phase in a new job (Ch. 7.2.5, "discovering the new location of migrated
   * processes, and re-creating communication channels"): join the job, learn where every rank
   * runs now, reconnect (crtcp: new connections to the new addresses, then the writes held
   * since the freeze), and go on. Messages drained at the freeze are in this process already.
   */
  private async adopt(series: number, contact: JobContact): Promise<void> {
    const { engine, runtime, module } = this.args;
    if (!runtime.adoption) throw new Error('this runtime cannot join another job');
    runtime.adoption.mayOutliveJob();
    await runtime.adoption.join(contact);
    const where = await runtime.allgather<ProcLocation>({
      gps: runtime.gps,
      host: runtime.host,
      processorName: runtime.nodeName,
    });
    for (const proc of engine.procs) proc.relocate(where[proc.gps.grank]!);
    await module.adopted?.(series);
    await this.eachColl((a, comm) => a.continue?.(comm));
    await engine.quartet.restart();
    keepAlive.release();
    await module.continue?.(series, true);
    this.state = 'IDLE';
    this.args.verbose(10, `adopted by job ${runtime.jobId} after series ${series}`);
    await this.announce();
    await this.args.api.fireContinue();
  }

  /** Runs `fn` over the coll actions of every live communicator that has selected its modules. */
  private async eachColl(fn: (actions: CollActions, comm: Communicator) => unknown): Promise<void> {
    for (const comm of this.args.communicators()) {
      const setup = await comm.selectedCollectives;
      if (setup) await fn(setup.actions, comm.insideCollective);
    }
  }
}

/** The node of every process, indexed by world rank. */
function nodesByRank(procs: readonly { gps: { node: number; grank: number } }[]): number[] {
  const out = new Array<number>(procs.length).fill(0);
  for (const p of procs) out[p.gps.grank] = p.gps.node;
  return out;
}
