import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { CollComm } from '@ssi/mpi';
import { MIN } from '@ssi/mpi';
import { ShmSegment, shmUnavailableReason, waitWord, wakeWord } from '@ssi/shm';

/** How the leader tells its node where the area is (or why there is none): one fixed buffer. */
const DESCRIPTOR_BYTES = 512;
/** Every segment name of this process is new: the creator's pid plus a counter. */
let created = 0;

/** The shape of one node's area. */
export interface AreaShape {
  /** Bytes per slot (a multiple of 8, so every typed array's elements align). */
  chunk: number;
  /** Slots of the bcast ring. */
  ring: number;
  /** Ranks on the node: the reductions have two sets of one slot per rank. */
  ranks: number;
}

/** Per rank a cache line of control words: [0] bcast pieces done, [1] a writer waits on [0]. */
const LINE = 64;
const DONE_WORD = 0;
const WAITING_WORD = 1;

/**
 * One node's shared-memory area for smp's on-node level (the way Open MPI's han/sm move data):
 * a segment of `@ssi/shm` that the node's leader creates and every other rank of the node attaches
 * to, used as plain memory: a writer copies a piece of the buffer in once, every other rank of the
 * node copies it out, instead of one rpi transfer (two copies plus the rendezvous) per rank. Who
 * may touch which slot when is said by small messages on the node's communicator (`area-flow.ts`).
 * A node of one rank has an area without memory: nobody reads what its only rank would write.
 */
export class NodeArea {
  /** bcast pieces this communicator has moved so far (every rank of the node counts alike). */
  piecesSent = 0;
  private readonly control: number;
  private readonly data: number;

  private constructor(
    private readonly seg: ShmSegment | null,
    /** Offset of the area in the segment. */
    base: number,
    readonly shape: AreaShape,
  ) {
    this.control = base;
    this.data = base + controlBytes(shape);
  }

  /** Slot `i` of the bcast ring as a byte view of `length` bytes. */
  ringSlot(i: number, length: number): Uint8Array {
    return this.view(i % this.shape.ring, length);
  }

  /** The reductions' slot of node rank `rank` in set `set` (0 or 1), `length` bytes. */
  setSlot(set: number, rank: number, length: number): Uint8Array {
    return this.view(this.shape.ring + set * this.shape.ranks + rank, length);
  }

  private view(slot: number, length: number): Uint8Array {
    const at = this.data + slot * this.shape.chunk;
    return this.seg!.u8.subarray(at, at + length);
  }

  private word(rank: number, which: number): number {
    return (this.control + rank * LINE) / 4 + which;
  }

  /** This rank is done with bcast pieces before `count` (their ring slots may be rewritten). */
  markDone(rank: number, count: number): void {
    const i32 = this.seg!.i32;
    Atomics.store(i32, this.word(rank, DONE_WORD), count);
    if (Atomics.load(i32, this.word(rank, WAITING_WORD)) !== 0) {
      wakeWord(this.seg!, this.word(rank, DONE_WORD) * 4);
    }
  }

  /**
   * Waits until every rank of `ranks` is done with bcast pieces before `count`: the writer of
   * piece g waits for g - ring + 1, so it never overwrites a slot a rank still reads, whichever
   * rank wrote before (the counts live in the area, not in one writer's memory). Sleeps in the
   * futex helper, never spinning on the event loop; the waiting flag tells the rank to wake it.
   */
  async waitDone(ranks: readonly number[], count: number): Promise<void> {
    const seg = this.seg!;
    for (const r of ranks) {
      const done = this.word(r, DONE_WORD);
      const waiting = this.word(r, WAITING_WORD);
      for (;;) {
        const seen = Atomics.load(seg.i32, done);
        if (((seen - count) | 0) >= 0) break;
        Atomics.store(seg.i32, waiting, 1);
        if (Atomics.load(seg.i32, done) === seen) {
          // A lost wake-up is impossible (the flag is set before the second look), but a
          // bounded sleep costs nothing and survives one anyway.
          await waitWord(seg, done * 4, seen, { timeoutMs: 1000 });
        }
        Atomics.store(seg.i32, waiting, 0);
      }
    }
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
    if (local.size === 1) return new NodeArea(null, 0, shape);
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
    if (ok[0] === 1 && seg) return new NodeArea(seg, seg.layout.poolOffset, shape);
    seg?.close();
    return failure ?? 'another rank of the node could not attach';
  }
}

function controlBytes(shape: AreaShape): number {
  return Math.ceil((shape.ranks * LINE) / 4096) * 4096;
}

/** The area's size in bytes: control lines, the bcast ring, the reductions' two sets. */
export function bytesOf(shape: AreaShape): number {
  return controlBytes(shape) + shape.chunk * (shape.ring + 2 * shape.ranks);
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
    // Not pre-faulted: a page is committed when first written, so slots a node never uses (the
    // second set of the reductions when buffers fit one piece) cost no memory.
    populate: false,
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
