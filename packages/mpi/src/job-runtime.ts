import type { RestartSummary } from './cr/image';
/**
 * The seam between the MPI layer and the run-time environment: everything `MPI.init`,
 * `MPI.finalize`, `abort` and the rpi modules' connection set-up need from whoever started the
 * process (`mpirun` through the lamds, or the test launcher of `@ssi/mpi/testing`).
 *
 * The MPI layer never talks to a lamd itself; it talks to a `JobRuntime`. The implementation over
 * the LAM client library (`@ssi/lam`: `nsend`/`nrecv`, the GPS of this process, mpirun's
 * collation of the GPS data) replaces the test one without any change here.
 */

import type { JobControl } from './control/rank-control';

/**
 * Global Process Space location of one process (App. C.1.2, `struct _gps`): unique in the
 * universe, used to address out-of-band messages and to sort the process list.
 */
export interface Gps {
  /** Node id in the universe, [0, nodes). */
  node: number;
  /** Operating-system pid of the process. */
  pid: number;
  /** Index of the process in its lamd's process table (the test launcher uses the rank). */
  index: number;
  /** Rank in MPI_COMM_WORLD. */
  grank: number;
}

/** Where one process of the job runs: what a process entry (`Proc`) holds of it. */
export interface ProcLocation {
  gps: Gps;
  /** Address this process's node is reached at (rpi modules bind and connect there). */
  host: string;
  /** Processor name (`MPI_Get_processor_name`). */
  processorName: string;
}

/** A module one process selected for a job-wide framework (`rpi`, later `crmpi`, ...). */
export interface ModuleChoice {
  name: string;
  version: string;
  /** Where it was found (a package directory, "static"), for the disagreement message. */
  origin?: string;
}

/** What each process contributes to the GPS exchange of `MPI.init` (Ch. 5.1.2). */
export interface ProcessInfo extends ProcLocation {
  /**
   * The module this process selected for each framework whose choice must be the same in every
   * rank, by framework type (`{ rpi: {...}, crmpi: {...} }`): checked by `checkAgreement` of
   * `@ssi/core`, by name and major.minor.
   */
  modules: Record<string, ModuleChoice>;
  /** A restarted process's rollback summary (the `self` restart contract), for every other. */
  restart?: RestartSummary;
}

/** Out-of-band message tags below this value belong to the MPI layer and its modules. */
export const OOB_TAG_USER_BASE = 1 << 20;

/** The OOB tags the MPI layer and first-party modules use (module authors pick above 1000). */
export const OobTag = {
  /** rpi connection set-up (ports, addresses). */
  RPI_SETUP: 100,
  /** rpi checkpoint/restart coordination (crtcp's drain counters). */
  RPI_CR: 101,
  /** the checkpoint store's plans during a checkpoint (parity's reduction among the ranks). */
  CR_STORE: 102,
} as const;

export interface JobRuntime {
  /** Identifies the job (mpirun's job id); part of every authentication. */
  readonly jobId: string;
  /**
   * The job's secret, shared by all its processes and the launcher only. It comes from the
   * environment or the session directory, never from a command line. rpi modules prove
   * knowledge of it on every connection.
   */
  readonly secret: Uint8Array;
  /** Rank of this process in MPI_COMM_WORLD, [0, size). */
  readonly rank: number;
  /** Number of processes in the job (the size of MPI_COMM_WORLD). */
  readonly size: number;
  /** This process's GPS (its `grank` equals `rank`). */
  readonly gps: Gps;
  /** Address of this process's node: where rpi listeners bind. */
  readonly host: string;
  /** Name of this process's node (processor name). */
  readonly nodeName: string;
  /**
   * The job control channel to the launcher (`mpirun`'s hub, the test launcher): typed messages
   * both ways, for cr modules and tools. `finalize` closes it.
   */
  readonly control: JobControl;

  /**
   * The GPS exchange "through mpirun" (Ch. 5.1.2): every process of the job calls it with its own
   * value (in the same order of calls everywhere); each gets all values ordered by rank. Also
   * serves as the barrier of `MPI.finalize`. Rejects (never hangs) when a process dies.
   */
  allgather<T>(value: T): Promise<T[]>;

  /** Out-of-band message to rank `to` (LAM's `nsend`); values are msgpackr-encodable. */
  oobSend(to: number, tag: number, value: unknown): Promise<void>;
  /** Next out-of-band message from rank `from` with `tag` (LAM's `nrecv`), in sending order. */
  oobRecv<T = unknown>(from: number, tag: number): Promise<T>;

  /**
   * Ends the whole job: every process is killed and the launcher exits with `code`, printing
   * `message`. Does not return. `peerLost`: the abort follows the loss of another process of the
   * job; a launcher that watches its processes reports that loss as the cause instead.
   */
  abort(code: number, message: string, details?: { peerLost?: boolean }): Promise<never>;

  /** Tells the launcher this process finalized cleanly, and releases the runtime's resources. */
  finalize(): Promise<void>;

  /**
   * Registers a callback for the death of another process of the job (optional: a runtime that
   * kills the job when one process dies need not report it).
   */
  onPeerDeath?(callback: (rank: number, reason: string) => void): void;

  /**
   * Optional: moving this process into another job (a process image restored under a new
   * mpirun, which cannot hand it a new environment). Absent where a runtime cannot do it.
   */
  readonly adoption?: JobAdoption;
}

/** Where a process finds the job that adopts it (written by the new job's launcher). */
export interface JobContact {
  /** This rank's job variables in the new job (`JOB_ENV`, the hub's address). */
  env: Record<string, string>;
  /** The session directory of the lamd on this process's node in the new universe. */
  sessionDir: string;
}

/** See `JobRuntime.adoption`. */
export interface JobAdoption {
  /**
   * From now on this process may outlive its job (its state is a saved image, to be adopted by
   * a new job): losing the lamd no longer ends it.
   */
  mayOutliveJob(): void;
  /** The lamd of the current job is gone. */
  readonly lost: boolean;
  /**
   * Joins the job of `contact` as the same rank: a new lamd connection, hello to the new hub
   * (every rank of that job must join), the new roster; the control channel carries on.
   */
  join(contact: JobContact): Promise<void>;
}

/**
 * Environment variables a launcher sets for every process of a job. `mpirun` uses the same
 * names; the test launcher sets them too, so programs run unchanged under either.
 */
export const JOB_ENV = {
  /** The job id. */
  JOB_ID: 'SSI_JOB_ID',
  /** Rank in MPI_COMM_WORLD. */
  RANK: 'SSI_RANK',
  /** Number of processes in the job. */
  SIZE: 'SSI_SIZE',
  /** Node id of the process's node. */
  NODE_ID: 'SSI_NODE_ID',
  /** Name of the node (processor name). */
  NODE_NAME: 'SSI_NODE_NAME',
  /** Address of the node: rpi listeners bind there. */
  HOST_ADDR: 'SSI_HOST_ADDR',
  /**
   * The largest number of the job's ranks on one node (optional): rpi modules' `query` reads it
   * (`RpiQueryContext.maxNodeRanks`), e.g. sm runs only where two ranks share a node.
   */
  MAX_NODE_RANKS: 'SSI_MAX_NODE_RANKS',
  /**
   * The job secret, hex. Read once by `MPI.init` and deleted from `process.env` so that the
   * program's own children do not inherit it. (A lamd-started process may instead find it in its
   * session directory; see `JobRuntime.secret`.)
   */
  SECRET: 'SSI_JOB_SECRET',
  /** host:port of the test launcher's rendezvous server: selects the test runtime. */
  TEST_RENDEZVOUS: 'SSI_TEST_RENDEZVOUS',
} as const;
