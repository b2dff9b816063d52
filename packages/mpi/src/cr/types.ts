/**
 * The checkpoint/restart framework's interfaces (Ch. 7, App. E, the cr report `000_…`): one cr
 * component is one package with two modules of the same name, `crlam` in `mpirun` and `crmpi` in
 * every rank, selected together by `--ssi cr <name>`. Both halves' types live here, with the
 * control messages between them.
 *
 * The MPI layer does the coordination every back end needs (the cr base): it holds the request
 * until the job is checkpointable, interrupts every rank (the entry gate closes), lets the rpi
 * drain the network and every live communicator's coll module prepare, and afterwards continues
 * or restarts them. A crmpi module only saves and restores one process (`self`: the application's
 * own state plus the MPI layer's image; a system-level back end: the process image); a crlam
 * module only decides where a series goes and when it is complete.
 */
import type { ParamRegistry, SsiModule } from '@ssi/core';
import { FRAMEWORKS } from '@ssi/core';
import type { JobContact } from '../job-runtime';
import type { MpiImage } from './image';
import type { ParitySetRecord, RankChannel, StoragePlan } from './store';

export const CRMPI_API_VERSION: string = FRAMEWORKS.crmpi.api;
export const CRLAM_API_VERSION: string = FRAMEWORKS.crlam.api;

/** One named piece of a process's checkpoint (the application's state, the MPI layer's image). */
export interface CheckpointSection {
  name: string;
  bytes: Uint8Array;
}

/** What a rank is told when a checkpoint of series `series` is taken. */
export interface CheckpointPoint {
  jobId: string;
  series: number;
  /** The checkpoint directory the crlam half chose (the store's root). */
  dir: string;
  rank: number;
  size: number;
  /** How the crlam half protects the series (absent: `local`); see the store's plans. */
  storage?: StoragePlan;
}

/** What a rank saved: the store's record of its file, for the series manifest. */
export interface SavedRank {
  rank: number;
  /** File name relative to the series directory. */
  file: string;
  bytes: number;
  sha256: string;
  /** With the `parity` plan, on a set's leader: the set's parity file. */
  parity?: ParitySetRecord;
}

/** The MPI layer's side of one checkpoint, handed to the crmpi module's `checkpoint`. */
export interface CheckpointWork {
  point: CheckpointPoint;
  /** The MPI layer's state (queued messages, rollback record): save it with the process. */
  image: MpiImage;
  /** The application's own sections (the `self` module asks the application for them). */
  applicationSections(): Promise<CheckpointSection[]>;
  /** The node of every rank, by world rank (a storage plan spreads redundancy over nodes). */
  nodeOf: readonly number[];
  /** Messages to other ranks while the job is held (out of band: the MPI layer is quiet). */
  channel: RankChannel;
}

/** What a restarted rank's crmpi module gives back at `MPI.init`. */
export interface RestoredRank {
  image: MpiImage;
  /** Sections the application wrote, by name (the `self` module hands them to the program). */
  sections: ReadonlyMap<string, Uint8Array>;
  series: number;
}

/** The rank half (`lam_ssi_crmpi_1_0_0_t`). */
export interface CrmpiModule extends SsiModule {
  type: 'crmpi';
  /** Can the module run in this process, and at what priority? null or a reason declines. */
  query(ctx: { params: ParamRegistry }): { priority: number } | null | string;
  init(ctx: { params: ParamRegistry; verbose(level: number, message: string): void }): CrmpiActions;
}

export interface CrmpiActions {
  /** Saves this process for series `work.point.series`; the job is quiet while it runs. */
  checkpoint(work: CheckpointWork): Promise<SavedRank>;
  /** The series is complete (or given up): the process goes on. */
  continue?(series: number, committed: boolean): Promise<void>;
  /** In a restarted process, at `MPI.init`: reads what this rank saved in `seriesDir`. */
  restart(seriesDir: string, rank: number): Promise<RestoredRank>;
  /**
   * Optional, for system-level checkpointers (AVS's restore): asked after `checkpoint` returned;
   * true when this process was restored from its image meanwhile, so its connections are gone.
   * mpirun then tells every rank to re-create its connections (the rpi's `restart`) instead of
   * continuing: reconnecting is collective, so one restored rank restores them all.
   */
  restored?(series: number): boolean;
  /**
   * Optional, for system-level checkpointers: after a series that ends the job (a drain: the
   * rank stays frozen, its state the image's), the base asks this every moment (the process may
   * have been stopped and resumed meanwhile) until it gives the contact of a new job that
   * adopts this process — a restart of the series' images in a new universe (`lamrestart`).
   * The base then joins that job, re-creates the connections (the rpi's `restart`) and goes on.
   * Asked once right after `checkpoint` too: an image dumped during it, restored in a new job,
   * resumes there (then no SAVED is sent: the series was committed by the old job).
   */
  newJob?(series: number): Promise<JobContact | null>;
  /** This process joined the new job of `newJob` (before the connections are re-created). */
  adopted?(series: number): Promise<void>;
  finalize?(): Promise<void>;
}

/** The application schema mpirun records in a series manifest (opaque to the store). */
export interface JobRecord {
  /** mpirun's parts: program, copies and where, as the user gave them. */
  parts: unknown[];
  /** `--ssi` settings of the job (`LAM_MPI_SSI_*`). */
  ssiEnv: Record<string, string>;
  size: number;
  cwd: string;
}

/** What the crlam half chose for a series before the ranks write. */
export interface SeriesPlan {
  series: number;
  dir: string;
  /** The storage plan of the series, sent to every rank with it (absent: `local`). */
  storage?: StoragePlan;
}

/** A committed series. */
export interface SeriesResult {
  series: number;
  dir: string;
  bytes: number;
  /** Series removed by the keep-last-K rule. */
  pruned: number[];
}

/** The `mpirun` half (`lam_ssi_crlam_1_0_0_t`). */
export interface CrlamModule extends SsiModule {
  type: 'crlam';
  query(ctx: { params: ParamRegistry }): { priority: number } | null | string;
  init(ctx: {
    params: ParamRegistry;
    jobId: string;
    job: JobRecord;
    verbose(level: number, message: string): void;
  }): Promise<CrlamActions>;
}

export interface CrlamActions {
  /** Seconds between automatic checkpoints (0: none), read from the module's parameters. */
  readonly interval: number;
  /** A checkpoint starts: where series `n` goes. */
  beginSeries(): Promise<SeriesPlan>;
  /** Every rank saved: make the series complete (manifest) and apply the keep rule. */
  commitSeries(plan: SeriesPlan, ranks: readonly SavedRank[]): Promise<SeriesResult>;
  /** A rank failed or died: the series stays incomplete (it is never used). */
  abandonSeries(plan: SeriesPlan, reason: string): Promise<void>;
  /**
   * The ranks go on before `commitSeries` (a storage plan that makes its redundancy after they
   * continue, and commits once it is durable); by default they are held until the commit.
   */
  readonly continueBeforeCommit?: boolean;
  /**
   * Optional: the command that stands for rank `rank` in a restart from `seriesDir` (a
   * process-image checkpointer's restore, run on the rank's node in the new job, as LAM's mpirun
   * re-executed with an application schema of `cr_restart` commands); absent or null: the
   * recorded program starts again and reads its part (`CrmpiActions.restart`).
   */
  restartArgv?(seriesDir: string, rank: number): Promise<string[] | null>;
  finalize?(): Promise<void>;
}

/** The control messages of the cr framework (namespaced on the job control channel). */
export const CrMessage = {
  /** rank → mpirun, after init: `{ module, checkpointable, reason? }`. */
  READY: 'cr.ready',
  /** rank → mpirun, at the start of finalize (the window closes). */
  FINALIZING: 'cr.finalizing',
  /** rank → mpirun (ask): the application asks for a checkpoint; answers the series outcome. */
  REQUEST: 'cr.request',
  /** mpirun → ranks: `{ series, dir, attempt }`: interrupt when not in a critical section. */
  PREPARE: 'cr.prepare',
  /** rank → mpirun: `{ attempt }`: interrupted (gate closed). */
  PREPARED: 'cr.prepared',
  /** mpirun → ranks: `{ attempt }`: not everyone got ready: reopen and wait for the next try. */
  RETREAT: 'cr.retreat',
  /** mpirun → ranks: `{ series, dir, attempt }`: drain and save. */
  GO: 'cr.go',
  /** rank → mpirun: `{ series, saved?, error?, drainMs, saveMs, restored? }`. */
  SAVED: 'cr.saved',
  /**
   * mpirun → ranks: `{ series, committed, restore?, stop? }`: continue (restore: reconnect
   * first); `stop`: the series ends the job (a drain): stay frozen until the job ends or a new job
   * adopts this process (`CrmpiActions.newJob`).
   */
  DONE: 'cr.done',
  /**
   * mpirun → ranks: `{ reason }`: the job must stop soon (PSC's drain, AVS's preempt); a
   * checkpoint follows at once and the job then ends ("checkpointed, restart me").
   */
  DRAIN: 'cr.drain',
} as const;

/** The environment variable that tells a rank it is restarted (the series directory). */
export const CR_RESTART_ENV = 'SSI_CR_RESTART';
