import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { ErrorClass, MpiError } from '@ssi/mpi';
import { cleanStaleSegments, ShmSegment } from '@ssi/shm';

/** What the ranks of one node need to agree on to share a segment. */
export interface NodeSegmentOptions {
  /** The universe's session directory: part of the segment's name (the lamd sweeps by it). */
  sessionDir: string;
  /** The job id (`SSI_JOB_ID`): part of the name, so the lamd removes it when the job ends. */
  job: string;
  /** The node's id in the universe: in the tag, so nodes that share one /dev/shm never collide. */
  node: number;
  /** This process's slot: its position among the job's ranks on this node (0 creates). */
  index: number;
  /** Ranks of the job on this node. */
  nprocs: number;
  shortLimit: number;
  poolSize: number;
  lock: 'spin' | 'block';
  attachTimeoutMs: number;
}

/**
 * The session directory segments are named after: the lamd's (`LAM_MPI_SESSION_DIR`, set for
 * every process it starts), else the default session directory's name, which only the hash uses.
 */
export function sessionDirOf(env: Record<string, string | undefined> = process.env): string {
  return env.LAM_MPI_SESSION_DIR || join(tmpdir(), `ssi-${userInfo().username}-nosession`);
}

/**
 * Creates (slot 0, the node's lowest rank) or attaches (every other slot) the job's segment on
 * this node. The creator first removes segments of this session whose processes are all dead
 * (what a SIGKILLed job left before all its processes attached), so the next job cleans up even
 * without a lamd. Once every slot attached, @ssi/shm unlinks the name: a crash later leaves
 * nothing in /dev/shm.
 */
export async function openNodeSegment(o: NodeSegmentOptions): Promise<ShmSegment> {
  const naming = { sessionDir: o.sessionDir, job: o.job, tag: `sm${o.node}` };
  try {
    if (o.index === 0) {
      cleanStaleSegments({ sessionDir: o.sessionDir });
      return ShmSegment.create({
        ...naming,
        nprocs: o.nprocs,
        index: 0,
        shortLimit: o.shortLimit,
        poolSize: o.poolSize,
        lock: o.lock,
        // Not pre-faulted: the postboxes are N² (32 MiB of 40 at 64 ranks) and MAP_POPULATE
        // committed them all in the creator, pairs that never talk included (issue #21: the
        // lowest rank's RSS grew ~0.5 MiB per peer). A page is now committed on first use.
        populate: false,
      });
    }
    return await ShmSegment.attach({ ...naming, index: o.index, timeoutMs: o.attachTimeoutMs });
  } catch (err) {
    const what = o.index === 0 ? 'create' : `attach (slot ${o.index} of ${o.nprocs}) to`;
    throw new MpiError(
      ErrorClass.ERR_OTHER,
      `rpi sm: cannot ${what} the node's shared segment: ${(err as Error).message}`,
    );
  }
}
