import { ErrorClass, MpiError } from './errors';
import type { Gps, ProcLocation } from './job-runtime';

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
  /** Highest sequence number that arrived from this process (a checkpoint records it). */
  recvSeq = 0;
  /** Hook where the selected rpi module hangs its per-peer state (`p_rpi`). */
  rpi: unknown = null;
  private where: ProcLocation;

  constructor(
    gps: Gps,
    host: string,
    processorName: string,
    /** Position in this process's sorted process list. */
    public listIndex = -1,
  ) {
    this.where = { gps, host, processorName };
  }

  /** GPS of the process. Changes only through `relocate` (a restarted job). */
  get gps(): Gps {
    return this.where.gps;
  }

  /** Address of its node. */
  get host(): string {
    return this.where.host;
  }

  /** Its processor name. */
  get processorName(): string {
    return this.where.processorName;
  }

  /**
   * Moves this entry to where its process runs now (a job restarted on other nodes, Ch. 7). The
   * identity of an entry is its world rank, so `gps.grank` must stay the same; groups keep
   * referencing this object. Re-sort the list afterwards (`rebuildProcessList` does both).
   */
  relocate(where: ProcLocation): void {
    const why = badLocation(where);
    if (why) throw new MpiError(ErrorClass.ERR_ARG, `cannot relocate ${this.describe()}: ${why}`);
    if (where.gps.grank !== this.gps.grank) {
      throw new MpiError(
        ErrorClass.ERR_ARG,
        `cannot relocate ${this.describe()} to the location of world rank ${where.gps.grank}: ` +
          'an entry keeps its world rank',
      );
    }
    this.where = { gps: { ...where.gps }, host: where.host, processorName: where.processorName };
  }

  /** "rank 3 (node 1, pid 4711)" for messages. */
  describe(): string {
    return `rank ${this.gps.grank} (node ${this.gps.node}, pid ${this.gps.pid})`;
  }
}

/** What is wrong with a location from the wire, or undefined when nothing is. */
export function badLocation(where: ProcLocation): string | undefined {
  const gps = where?.gps;
  if (!gps || typeof gps !== 'object') return 'no gps (expected { node, pid, index, grank })';
  for (const field of ['node', 'pid', 'index', 'grank'] as const) {
    const v = gps[field];
    if (!Number.isInteger(v) || v < 0) {
      return `gps.${field} is ${String(v)}, expected a non-negative integer`;
    }
  }
  if (typeof where.host !== 'string' || where.host === '') {
    return `host is ${JSON.stringify(where.host)}, expected a node address`;
  }
  if (typeof where.processorName !== 'string') {
    return `processorName is ${String(where.processorName)}, expected a string`;
  }
  return undefined;
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
