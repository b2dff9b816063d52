import type { CollComm, ReduceOp } from '@ssi/mpi';
import type { Hierarchy } from './hierarchy';
import { isPowerOfTwo } from './leaders-allreduce';
import { doublingExchange, type Part, StageCache } from './lengths-exchange';
import type { SmpSettings } from './params';
import { Tag } from './tags';

const stages = new StageCache();

/**
 * The first step of every reduce and allreduce smp combines node by node: an allreduce whose
 * messages carry each rank's operand length (the shortest and longest heard of) and, below
 * `coll_smp_shm_min_bytes`, the operands themselves (`part.acc`: then this step is the whole
 * reduction). Every rank takes part with whatever length it passed, so all of them learn whether
 * the lengths agree before any large operand moves: an erroneous program with operands of
 * different lengths gets ERR_TRUNCATE on every rank (`lengthsDiffer`), instead of ranks taking
 * different paths by their own lengths and waiting for messages that never come.
 *
 * On a power-of-two number of ranks where that is fewer hops than the levels (2 + 2: two against
 * three) and no node has fewer CPUs than ranks (`takesDoubling`), by recursive doubling over the
 * whole communicator. Otherwise as smp's barrier: every
 * other rank of a node sends its part to the leader on the parent's collective channel, the
 * leader combines them in node rank order, the leaders exchange by recursive doubling, the leader
 * sends the result back. Point-to-point on the parent instead of a reduce and a bcast on the
 * node's communicator: the same messages, without two nested collective calls per rank.
 */
export async function exchangeLengths(
  h: Hierarchy,
  s: SmpSettings,
  comm: CollComm,
  part: Part,
  op: ReduceOp,
): Promise<void> {
  const { loc, leaders } = h;
  const { send, recv } = stages.of(h, s.shmMinBytes, h.local.size - 1);
  if (takesDoubling(h, comm.size)) {
    await doublingExchange(comm, part, op, Tag.LENGTHS_PAIR, send, recv[0]!);
    return;
  }
  if (!loc.isLeader) {
    const leader = loc.localRanks[0]!;
    await comm.coll.send(send.pack(part), leader, Tag.SMALL_IN);
    const got = await comm.coll.recv(recv[0]!.bytes, leader, Tag.SMALL_OUT);
    recv[0]!.adopt(part, got.byteLength);
    return;
  }
  const others = loc.localRanks.slice(1);
  const got = await Promise.all(
    others.map((r, i) => comm.coll.recv(recv[i]!.bytes, r, Tag.SMALL_IN)),
  );
  for (const [i, st] of got.entries()) recv[i]!.absorb(part, st.byteLength, op, true);
  if (leaders) await doublingExchange(leaders, part, op, Tag.LENGTHS_PAIR, send, recv[0]!);
  const out = send.pack(part);
  await Promise.all(others.map((r) => comm.coll.send(out, r, Tag.SMALL_OUT)));
}

/**
 * Recursive doubling over the whole communicator takes log2(size) hops; the two levels take two
 * (to the leader and back) plus log2(nodes) between leaders. Doubling only when it is strictly
 * shorter (2 + 2 ranks: 2 hops against 3): on a tie the levels move fewer messages (4 + 4 ranks:
 * measured in two runs: the levels 628 µs against lam_basic's 735, doubling 824 against 851).
 */
export function doublingIsShorter(size: number, nodes: number): boolean {
  return isPowerOfTwo(size) && Math.log2(size) < 2 + Math.ceil(Math.log2(nodes));
}

/**
 * Whether the small collectives (barrier, the length exchange) on `h`'s communicator of `size`
 * ranks take recursive doubling: where it is shorter and no node is crowded. On a crowded node
 * the node's ranks take turns on its CPUs, so messages count rather than hops: doubling moves 8
 * on 2 + 2 ranks, the levels 6 (measured, 2 + 2 bound in blocks of two ranks per CPU, as mpirun
 * binds 4 ranks on 2 CPUs: allreduce 8 B 133-141 µs by the levels against 224-244 by doubling
 * and lam_basic's 155; barrier 154-161 against 227-239 and 206-210. Unbound, doubling was the
 * faster: 186 against 414 µs, barrier 240 against 432).
 */
export function takesDoubling(h: Hierarchy, size: number): boolean {
  return !h.crowded && doublingIsShorter(size, h.loc.nodes.length);
}
