import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { CollComm } from '@ssi/mpi';
import { MIN } from '@ssi/mpi';
import {
  type CrossMemory,
  crossMemory,
  ShmSegment,
  shmUnavailableReason,
  waitWord,
  wakeWord,
} from '@ssi/shm';

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
  /** Whether bcast readers may copy straight out of the writer's memory, where the kernel lets them. */
  singleCopy: boolean;
}

/**
 * Bytes before the data in each ring slot: a bcast piece carries the root's length there, so the
 * piece that crosses between leaders and the slot its node reads are the same bytes.
 */
export const RING_HEAD = 32;

/**
 * Per rank a cache line of control words: [0] bcast pieces done, [1] a writer waits on [0];
 * bytes 8-23: the rank's pid and the address of its probe word (`probeSingleCopy`).
 */
const LINE = 64;
const DONE_WORD = 0;
const WAITING_WORD = 1;
const PROBE_AT = 8;

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
  /**
   * Cross-memory attach, when every rank of the node can read every other's memory with it
   * (tried at the opening): bcast readers then copy straight out of the writer's buffer.
   */
  cross: CrossMemory | null = null;
  /**
   * Whether a bcast may go striped (`bcast-striped.ts`): every node holds as many of the
   * communicator's ranks and has cross-memory attach (agreed over the communicator when opened).
   */
  stripes = false;
  private readonly control: number;
  private readonly data: number;
  /** A one-rank node's ring, in its own memory (nobody else reads it): made when first used. */
  private privateRing: Uint8Array | null = null;

  private constructor(
    private readonly seg: ShmSegment | null,
    /** Offset of the area in the segment. */
    base: number,
    readonly shape: AreaShape,
  ) {
    this.control = base;
    this.data = base + controlBytes(shape);
  }

  /**
   * Slot `i` (mod the ring) of the bcast ring: `RING_HEAD` bytes, then room for `length` bytes of
   * data. On a one-rank node the ring is private memory.
   */
  ringSlot(i: number, length: number): Uint8Array {
    const stride = this.shape.chunk + RING_HEAD;
    const at = (i % this.shape.ring) * stride;
    if (this.seg) return this.seg.u8.subarray(this.data + at, this.data + at + RING_HEAD + length);
    this.privateRing ??= new Uint8Array(stride * this.shape.ring);
    return this.privateRing.subarray(at, at + RING_HEAD + length);
  }

  /** The reductions' slot of node rank `rank` in set `set` (0 or 1), `length` bytes. */
  setSlot(set: number, rank: number, length: number): Uint8Array {
    const at =
      this.data + ringBytes(this.shape) + (set * this.shape.ranks + rank) * this.shape.chunk;
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

  /** Whether every rank of `ranks` is done with bcast pieces before `count` (`waitDone`). */
  isDone(ranks: readonly number[], count: number): boolean {
    for (const r of ranks) {
      if (((Atomics.load(this.seg!.i32, this.word(r, DONE_WORD)) - count) | 0) < 0) return false;
    }
    return true;
  }

  /**
   * Waits until every rank of `ranks` is done with bcast pieces before `count`: the writer of
   * piece g waits for g - ring + 1, so it never overwrites a slot a rank still reads, whichever
   * rank wrote before (the counts live in the area, not in one writer's memory). Sleeps in the
   * futex helper, never spinning on the event loop; the waiting flag tells the rank to wake it.
   */
  async waitDone(ranks: readonly number[], count: number): Promise<void> {
    if (this.isDone(ranks, count)) return;
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

  /**
   * Whether every rank of the node can read every other's memory with cross-memory attach: the
   * kernel decides per pair of processes (ptrace rules), so each rank publishes a probe word in
   * its control line and reads every other's; the node agrees by a `MIN` (collective over
   * `local`).
   */
  private async probeSingleCopy(local: CollComm): Promise<CrossMemory | null> {
    const cm = crossMemory();
    const magic = (r: number) => 0x5eed0000 + r;
    const probe = new Float64Array([magic(local.rank)]);
    const u8 = this.seg!.u8;
    const line = (r: number) =>
      new Float64Array(u8.buffer, u8.byteOffset + this.control + r * LINE + PROBE_AT, 2);
    line(local.rank).set(cm ? [process.pid, cm.addressOf(probe)] : [0, 0]);
    await local.barrier();
    let ok = cm !== null;
    for (let r = 0; ok && r < local.size; r++) {
      if (r === local.rank) continue;
      const [pid, address] = line(r);
      const got = new Float64Array(1);
      try {
        if (pid) cm!.readFrom(pid, address!, got);
      } catch {
        ok = false;
      }
      ok &&= got[0] === magic(r);
    }
    const all = new Int32Array([ok ? 1 : 0]);
    await local.allreduce(all, MIN, all);
    probe[0] = 0; // keeps the probe alive until every rank has read it
    return all[0] === 1 ? cm : null;
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
    if (ok[0] === 1 && seg) {
      const area = new NodeArea(seg, seg.layout.poolOffset, shape);
      if (shape.singleCopy) area.cross = await area.probeSingleCopy(local);
      return area;
    }
    seg?.close();
    return failure ?? 'another rank of the node could not attach';
  }
}

function controlBytes(shape: AreaShape): number {
  return Math.ceil((shape.ranks * LINE) / 4096) * 4096;
}

function ringBytes(shape: AreaShape): number {
  return (shape.chunk + RING_HEAD) * shape.ring;
}

/** The area's size in bytes: control lines, the bcast ring, the reductions' two sets. */
export function bytesOf(shape: AreaShape): number {
  return controlBytes(shape) + ringBytes(shape) + shape.chunk * 2 * shape.ranks;
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
