import type { Gps } from './job-runtime';

/** Bits of `Proc.mode`. The low 8 bits belong to the MPI layer (App. C.1.3), the rest to the rpi. */
export const ProcMode = {
  /** Generic marking flag. */
  MARK: 1 << 0,
  /** The process has died. */
  DEAD: 1 << 1,
  /** The rpi module has been initialized for this process (addprocs done). */
  RPI_INIT: 1 << 2,
  /** The process joined after MPI.init (spawned or connected). */
  CLIENT: 1 << 3,
  /** Same byte order as this process (always, in Node on one architecture). */
  HOMOG: 1 << 4,
  /** The rpi module has a live connection to this process. */
  RPI_CONNECT: 1 << 5,
} as const;

/**
 * A process entry (App. C.1.3, `struct _proc`): what this process knows about one peer (or
 * itself). Groups reference entries; ranks are resolved to entries before they reach the rpi.
 * rpi modules read the public fields and keep their own state in `rpi`.
 */
export class Proc {
  /** Flags, see `ProcMode`. The rpi may set bits above the low 8. */
  mode = ProcMode.HOMOG;
  /** Groups referencing this entry. */
  refcount = 0;
  /** Messages sent to this process (LAM's `p_get_nsnd`); the next message's sequence number. */
  sendSeq = 0;
  /** Hook where the selected rpi module hangs its per-peer state (`p_rpi`). */
  rpi: unknown = null;

  constructor(
    /** GPS of the process. */
    readonly gps: Gps,
    /** Address of its node. */
    readonly host: string,
    /** Its processor name. */
    readonly processorName: string,
    /** Position in this process's sorted process list. */
    public listIndex = -1,
  ) {}

  /** "rank 3 (node 1, pid 4711)" for messages. */
  describe(): string {
    return `rank ${this.gps.grank} (node ${this.gps.node}, pid ${this.gps.pid})`;
  }
}

/**
 * The order of the process list (Ch. 5.1.2): any order works as long as every process uses the
 * same one, so that pairwise set-up proceeds in a deadlock-free order. World rank first (unique
 * within a job), then the GPS location.
 */
export function compareGps(a: Gps, b: Gps): number {
  return a.grank - b.grank || a.node - b.node || a.index - b.index || a.pid - b.pid;
}

export function sortProcs(procs: Proc[]): Proc[] {
  procs.sort((a, b) => compareGps(a.gps, b.gps));
  procs.forEach((p, i) => {
    p.listIndex = i;
  });
  return procs;
}
