import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { CollComm } from '@ssi/mpi';
import { MIN } from '@ssi/mpi';
import { ShmSegment, shmUnavailableReason } from '@ssi/shm';

/** How the leader tells its node where the area is (or why there is none): one fixed buffer. */
const DESCRIPTOR_BYTES = 512;
/** Every segment name of this process is new: the creator's pid plus a counter. */
let created = 0;

/** The shape of one node's area: `slots` slots of `chunk` bytes each. */
export interface AreaShape {
  /** Bytes per slot (a multiple of 8, so every typed array's elements align). */
  chunk: number;
  /** Slots in the area (at least 2 per rank of the node: double buffering). */
  slots: number;
}

/**
 * One node's shared-memory area for smp's on-node level (the way Open MPI's han/sm move data):
 * a segment of `@ssi/shm` that the node's leader creates and every other rank of the node attaches
 * to, used as plain memory: a writer copies a piece of the buffer in once, every other rank of the
 * node copies it out, instead of one rpi transfer (two copies plus the rendezvous) per rank. Who
 * may touch which slot when is said by small messages on the node's communicator (`area-flow.ts`).
 * A node of one rank has an area without memory: nobody reads what its only rank would write.
 */
export class NodeArea {
  private constructor(
    private readonly seg: ShmSegment | null,
    /** The slots, back to back: slot i is `bytes[i * chunk, (i + 1) * chunk)`. */
    readonly bytes: Uint8Array,
    readonly shape: AreaShape,
  ) {}

  /** Slot `i` as a byte view of `length` bytes (the last piece of a buffer is shorter). */
  slot(i: number, length: number): Uint8Array {
    const at = i * this.shape.chunk;
    return this.bytes.subarray(at, at + length);
  }

  /** Unmaps the area (the name was unlinked once every rank attached). */
  close(): void {
    this.seg?.close();
  }

  /**
   * Creates (the node's leader) or attaches (every other rank of `local`) the node's area,
   * collective over `local`. Returns the area, or a sentence saying why there is none on this
   * node (then no rank of the node has one: they agree by a `MIN` over `local`).
   */
  static async open(local: CollComm, shape: AreaShape): Promise<NodeArea | string> {
    if (local.size === 1) return new NodeArea(null, new Uint8Array(0), shape);
    const descriptor = new Uint8Array(DESCRIPTOR_BYTES);
    let seg: ShmSegment | null = null;
    let failure: string | null = null;
    if (local.rank === 0) {
      try {
        seg = createSegment(local.size, shape);
        writeJson(descriptor, { name: seg.name, job: seg.job });
      } catch (err) {
        failure = (err as Error).message;
        writeJson(descriptor, { failure: failure.slice(0, DESCRIPTOR_BYTES / 2) });
      }
    }
    await local.bcast(descriptor, 0);
    if (local.rank !== 0) {
      const d = readJson(descriptor) as { name?: string; job?: string; failure?: string };
      if (d.failure !== undefined) failure = `the node's leader could not create it: ${d.failure}`;
      else {
        try {
          seg = await ShmSegment.attach({
            name: d.name!,
            job: d.job!,
            index: local.rank,
            timeoutMs: 10_000,
          });
        } catch (err) {
          failure = `rank ${local.rank} of the node could not attach: ${(err as Error).message}`;
        }
      }
    }
    const ok = new Int32Array([seg ? 1 : 0]);
    await local.allreduce(ok, MIN, ok);
    if (ok[0] === 1 && seg) {
      const { poolOffset } = seg.layout;
      return new NodeArea(seg, seg.u8.subarray(poolOffset, poolOffset + bytesOf(shape)), shape);
    }
    seg?.close();
    return failure ?? 'another rank of the node could not attach';
  }
}

/** The area's size in bytes. */
export function bytesOf(shape: AreaShape): number {
  return shape.chunk * shape.slots;
}

/**
 * A new segment whose pool region serves as the area (no pool allocator runs on it: the area is
 * plain memory), with the smallest postboxes `@ssi/shm` allows (nobody sends through them).
 * Named by the session and job like the sm rpi's segments, so the lamd removes one a crash left.
 */
function createSegment(nprocs: number, shape: AreaShape): ShmSegment {
  const why = shmUnavailableReason();
  if (why) throw new Error(why);
  const block = 4096;
  return ShmSegment.create({
    sessionDir:
      process.env.LAM_MPI_SESSION_DIR || join(tmpdir(), `ssi-${userInfo().username}-nosession`),
    job: process.env.SSI_JOB_ID || `pid${process.pid}`,
    tag: `smp${process.pid}n${++created}`.slice(0, 16),
    nprocs,
    shortLimit: 64,
    poolSize: Math.ceil(bytesOf(shape) / block) * block,
    poolBlock: block,
  });
}

function writeJson(into: Uint8Array, value: unknown): void {
  const text = new TextEncoder().encode(JSON.stringify(value));
  if (text.length > into.length) throw new Error('smp: area descriptor too long');
  into.set(text);
}

function readJson(from: Uint8Array): unknown {
  const end = from.indexOf(0);
  return JSON.parse(new TextDecoder().decode(from.subarray(0, end < 0 ? from.length : end)));
}
