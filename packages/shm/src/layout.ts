import { ShmError } from './errors';

/*
 * The layout of one segment. LAM's sysv/usysv segment (dissertation Ch. 5.2.3) has three areas:
 * the global pool lock (2 x C), N x (N - 1) postboxes of S + C bytes, and the pool P. Ours adds a
 * header (checked by every process that attaches) and one cache line per process (its pid, its
 * doorbell and flags), and keeps the pool's block table in front of the pool:
 *
 *   offset 0            header            2 x C   magic, layout version, state, sizes, job id
 *   lockOffset          pool lock         2 x C   LAM's first area: owner pid | waiter count
 *   procOffset          process lines     N x C   pid, doorbell, sleeping, waiting-for-pool, state
 *   postboxOffset       postboxes         N(N-1) x (C + ring)   one SPSC ring per ordered pair
 *   tableOffset         pool block table  4 bytes per pool block
 *   poolOffset          pool              P       page aligned; large messages in chunks
 *
 * Every area starts on a cache line (C = 64) so that words written by different processes never
 * share a line with each other's hot words, except head/tail of a postbox, which share its one
 * control line exactly as in LAM's "short message plus a cache line" postbox.
 */

export const MAGIC = 0x4d485353; // "SSHM" little-endian
export const LAYOUT_VERSION = 1;
export const CACHE_LINE = 64;
export const PAGE = 4096;
export const RECORD_HEADER = 8;
export const MAX_JOB_BYTES = 64;
export const MAX_PROCS = 1024;

/** Header fields, as Int32Array indices (byte offset / 4). */
export const H = {
  magic: 0,
  version: 1,
  state: 2,
  cacheLine: 3,
  sizeLo: 4,
  sizeHi: 5,
  nprocs: 6,
  shortLimit: 7,
  ringCapacity: 8,
  poolBlock: 9,
  poolBlocks: 10,
  creatorPid: 11,
  attached: 12,
  jobLength: 13,
  brokenBy: 14,
  lockKind: 15,
  jobBytes: 64, // byte offset of the job id (MAX_JOB_BYTES bytes)
} as const;

export const HEADER_BYTES = 2 * CACHE_LINE;

export const STATE_INIT = 0;
export const STATE_READY = 1;
export const STATE_BROKEN = 2;

/** Words of a process line, as Int32Array indices relative to the line. */
export const P = { pid: 0, bell: 1, sleeping: 2, waitPool: 3, state: 4 } as const;
export const PROC_ATTACHED = 1;
export const PROC_CLOSED = 2;

/** Words of a postbox control line, relative to it. */
export const R = { head: 0, tail: 1, producerWaiting: 2 } as const;

export const LOCK_SPIN = 1;
export const LOCK_BLOCK = 2;

export interface LayoutParams {
  /** Processes on the node sharing the segment (N). */
  nprocs: number;
  /** Largest message carried whole in a postbox, bytes (S). */
  shortLimit: number;
  /** Size of the pool for large messages, bytes (P). 0 = no pool: large messages are refused. */
  poolSize: number;
  /** Allocation unit of the pool, bytes (a power of two). */
  poolBlock: number;
}

export interface Layout extends LayoutParams {
  cacheLine: number;
  ringCapacity: number;
  lockOffset: number;
  procOffset: number;
  postboxOffset: number;
  postboxStride: number;
  tableOffset: number;
  poolOffset: number;
  poolBlocks: number;
  totalSize: number;
}

export const DEFAULT_SHORT_LIMIT = 8192;
export const DEFAULT_POOL_SIZE = 8 * 1024 * 1024;
export const DEFAULT_POOL_BLOCK = 16 * 1024;
export const MAX_SHORT_LIMIT = 16 * 1024 * 1024;
export const MAX_POOL_SIZE = 16 * 1024 * 1024 * 1024;
export const MAX_SEGMENT = 64 * 1024 * 1024 * 1024;

const align = (n: number, a: number) => Math.ceil(n / a) * a;

function checkInt(name: string, v: unknown, min: number, max: number, hint: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new ShmError(
      'BAD_ARGS',
      `${name} must be an integer from ${min} to ${max}, got ${String(v)}; ${hint}`,
    );
  }
  return v;
}

/** Compute (and validate) the layout: LAM's (2 x C) + N(N-1)(S + C) + P, plus our header lines. */
export function computeLayout(p: LayoutParams): Layout {
  const nprocs = checkInt('nprocs', p.nprocs, 1, MAX_PROCS, 'one per process on the node');
  const shortLimit = checkInt(
    'shortLimit',
    p.shortLimit,
    64,
    MAX_SHORT_LIMIT,
    `the postbox size in bytes (default ${DEFAULT_SHORT_LIMIT})`,
  );
  const poolBlock = checkInt(
    'poolBlock',
    p.poolBlock,
    PAGE,
    64 * 1024 * 1024,
    `the pool allocation unit (default ${DEFAULT_POOL_BLOCK})`,
  );
  if ((poolBlock & (poolBlock - 1)) !== 0) {
    throw new ShmError('BAD_ARGS', `poolBlock must be a power of two, got ${poolBlock}`);
  }
  const poolSize = checkInt(
    'poolSize',
    p.poolSize,
    0,
    MAX_POOL_SIZE,
    `0 (no pool) or at least one poolBlock (default ${DEFAULT_POOL_SIZE})`,
  );
  if (poolSize !== 0 && poolSize < poolBlock) {
    throw new ShmError(
      'BAD_ARGS',
      `poolSize ${poolSize} is smaller than one pool block (${poolBlock}); use 0 for no pool or at least ${poolBlock}`,
    );
  }
  const C = CACHE_LINE;
  const ringCapacity = align(shortLimit, 8) + RECORD_HEADER;
  const lockOffset = HEADER_BYTES;
  const procOffset = lockOffset + 2 * C;
  const postboxOffset = procOffset + nprocs * C;
  const postboxStride = C + align(ringCapacity, C);
  const poolBlocks = Math.floor(poolSize / poolBlock);
  const tableOffset = postboxOffset + nprocs * (nprocs - 1) * postboxStride;
  const poolOffset = align(tableOffset + poolBlocks * 4, PAGE);
  const totalSize = align(poolOffset + poolBlocks * poolBlock, PAGE);
  if (totalSize > MAX_SEGMENT) {
    throw new ShmError(
      'BAD_ARGS',
      `the segment would be ${totalSize} bytes (more than ${MAX_SEGMENT}); reduce nprocs, shortLimit or poolSize`,
    );
  }
  return {
    nprocs,
    shortLimit,
    poolSize: poolBlocks * poolBlock,
    poolBlock,
    cacheLine: C,
    ringCapacity,
    lockOffset,
    procOffset,
    postboxOffset,
    postboxStride,
    tableOffset,
    poolOffset,
    poolBlocks,
    totalSize,
  };
}

/** Byte offset of the control line of the postbox carrying messages from `from` to `to`. */
export function postboxOffset(l: Layout, from: number, to: number): number {
  const slot = from * (l.nprocs - 1) + (to < from ? to : to - 1);
  return l.postboxOffset + slot * l.postboxStride;
}

/** Byte offset of a process line. */
export function procLineOffset(l: Layout, index: number): number {
  return l.procOffset + index * l.cacheLine;
}
