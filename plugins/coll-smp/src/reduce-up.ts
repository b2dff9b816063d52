import type { CollComm, NumericArray, ReduceOp } from '@ssi/mpi';
import { AreaFlow, pieceCount } from './area-flow';
import { reduceTreeAtZero } from './binomial';
import { bytesOf, keptLike } from './buffers';
import type { Hierarchy } from './hierarchy';
import { lengthsDiffer, type Part, type Stage, StageCache } from './lengths-exchange';
import type { NodeArea } from './node-area';
import type { SmpSettings } from './params';
import { reduceThroughArea } from './reduce-area';
import { Tag } from './tags';

/** The kept scratch array a small reduce accumulates in off the root (`keptLike` slots 0-1: the area). */
export const SMALL_SLOT = 2;

const stages = new StageCache();

/**
 * smp's reduce with the shared area, the operand lengths flowing only up the reduce's tree, so
 * that no rank waits for a round over the whole communicator before data moves and consecutive
 * reduces overlap as lam_basic's do. Every rank first sends its leader a header with its length
 * (below `coll_smp_shm_min_bytes` with its operand: then the header is the whole reduction), each
 * leader sends its parent leader the shortest and longest length of its subtree (and a small
 * partial), then large operands move through the area and the leaders' tree as in
 * `reduceThroughArea`. A leader whose subtree's lengths differ (an erroneous program) takes in
 * whatever its senders declared (hearing each rank's pieces and receiving each consistent child's
 * pieces without using them), sends only its header on, and reports ERR_TRUNCATE; so does the
 * root, which always learns the shortest and longest of all. The other ranks, like lam_basic's
 * non-roots, send and return.
 */
export async function reduceUp(
  h: Hierarchy,
  s: SmpSettings,
  comm: CollComm,
  area: NodeArea,
  send: NumericArray | null,
  recv: NumericArray | null,
  op: ReduceOp,
  root: number,
): Promise<void> {
  const { loc, leaders } = h;
  const own = (send ?? recv)!;
  const small = own.byteLength < s.shmMinBytes;
  const isRoot = comm.rank === root;
  const tree = leaders ? reduceTreeAtZero(leaders.rank, leaders.size) : null;
  const others = loc.localRanks.slice(1);
  const st = stages.of(h, s.shmMinBytes, others.length + (tree?.children.length ?? 0));
  const leader = loc.localRanks[0]!;
  const acc = !small ? null : isRoot ? recv! : keptLike(h, own, SMALL_SLOT);
  if (acc && acc !== own) acc.set(own as never);
  const part: Part = { min: own.byteLength, max: own.byteLength, acc };

  if (!loc.isLeader) {
    await comm.coll.send(st.send.pack(part), leader, Tag.REDUCE_UP);
    if (!small) await reduceThroughArea(h, comm, area, send, recv, op, root);
    if (isRoot) await resultAtRoot(comm, st.recv[0]!, part, recv!, small);
    return;
  }

  // The headers of the node's other ranks (in node rank order), then of the child leaders.
  const heard = await Promise.all([
    ...others.map((r, i) => comm.coll.recv(st.recv[i]!.bytes, r, Tag.REDUCE_UP)),
    ...(tree?.children ?? []).map((c, j) =>
      leaders!.coll.recv(st.recv[others.length + j]!.bytes, c, Tag.LEADERS_UP),
    ),
  ]);
  const declared = heard.map((got, i) => {
    const stage = st.recv[i]!;
    const from = stage.declared();
    stage.absorb(part, got.byteLength, op, true);
    return from;
  });
  const error = lengthsDiffer(part, 'reduce', comm.name);
  if (tree && tree.parent >= 0) {
    await leaders!.coll.send(st.send.pack(part), tree.parent, Tag.LEADERS_UP);
  }
  // Rank 0 tops the tree: it has heard every length, and tells a root elsewhere.
  if (comm.rank === 0 && !isRoot) {
    const verdict = error || !small ? { ...part, acc: null } : part;
    await comm.coll.send(st.send.pack(verdict), root, Tag.REDUCE_UP);
  }
  const elsewhere = isRoot && comm.rank !== 0;
  if (error) {
    await takeDeclaredPieces(h, area, declared, others.length, tree?.children ?? [], s);
    // A root here still takes rank 0's verdict, so that no message of this call is left over.
    if (elsewhere) await resultAtRoot(comm, st.recv[0]!, part, recv!, true).catch(() => {});
    throw error;
  }
  if (!small) await reduceThroughArea(h, comm, area, send, recv, op, root);
  if (elsewhere) await resultAtRoot(comm, st.recv[0]!, part, recv!, small);
}

/**
 * A root other than rank 0: rank 0's verdict on the lengths (with a small result), then a large
 * result.
 */
async function resultAtRoot(
  comm: CollComm,
  stage: Stage,
  part: Part,
  recv: NumericArray,
  small: boolean,
): Promise<void> {
  const got = await comm.coll.recv(stage.bytes, 0, Tag.REDUCE_UP);
  stage.adopt(part, got.byteLength);
  const error = lengthsDiffer(part, 'reduce', comm.name);
  if (error) throw error;
  if (!small) await comm.coll.recv(bytesOf(recv), 0, Tag.REDUCE_RESULT);
}

/**
 * A leader whose subtree's lengths differ: lets every sender finish what it declared. Each other
 * rank of the node with a large operand writes its pieces into the area and waits to be told
 * each was taken; each child leader whose subtree agreed on a large length sends its pieces.
 * Both are taken by their declared lengths and not used.
 */
async function takeDeclaredPieces(
  h: Hierarchy,
  area: NodeArea,
  declared: { min: number; max: number }[],
  onNode: number,
  children: number[],
  s: SmpSettings,
): Promise<void> {
  const large = (d: { min: number; max: number }) => d.min >= s.shmMinBytes;
  const chunk = area.shape.chunk;
  const flow = new AreaFlow(h.local);
  const ranks = declared.slice(0, onNode).map((d, i) => ({ d, r: i + 1 }));
  await Promise.all(
    ranks
      .filter(({ d }) => large(d))
      .map(async ({ d, r }) => {
        for (let i = 0; i < pieceCount(d.min, chunk); i++) {
          await flow.hear([r], Tag.AREA_IN);
          flow.tell([r], Tag.AREA_READY);
        }
      }),
  );
  const scratch = new Uint8Array(chunk);
  for (const [j, c] of children.entries()) {
    const d = declared[onNode + j]!;
    if (d.min !== d.max || !large(d)) continue;
    for (let i = 0; i < pieceCount(d.min, chunk); i++) {
      await h.leaders!.coll.recv(scratch, c, Tag.LEADERS_REDUCE);
    }
  }
  await flow.drained();
}
