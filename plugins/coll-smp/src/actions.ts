import type { CollActions, CollComm, NumericArray, ReduceOp } from '@ssi/mpi';
import { IN_PLACE } from '@ssi/mpi';
import { areaFor, areaOpened, openArea } from './area-use';
import { barrierHierarchical } from './barrier';
import { bcastAgreed } from './bcast-agreed';
import { copyInto, keptLike } from './buffers';
import type { Hierarchy } from './hierarchy';
import { lengthsDiffer } from './lengths-exchange';
import type { SmpSettings } from './params';
import { allreduceHierarchical, reduceHierarchical } from './reduce';
import { allreduceThroughArea } from './reduce-area';
import { reduceUp, SMALL_SLOT } from './reduce-up';
import { exchangeLengths } from './reduction-exchange';

/**
 * Whether a reduction with `op` may be combined node by node. The seed's rule (Ch. 6.3.2):
 * operators whose operand order matters (non-commutative user operators) keep lam_basic's rank
 * order, and re-association is a choice the user can turn off (`coll_smp_associative 0`).
 */
export function mayReassociate(op: ReduceOp, s: SmpSettings): boolean {
  return s.associative && op.commutative;
}

/**
 * The collectives smp provides for a communicator with hierarchy `h`: bcast, barrier, reduce and
 * allreduce. Each decides per call, identically on every rank (buffer sizes and the operator are
 * the same everywhere), between the hierarchy and the flat duplicate served by lam_basic. Every
 * other collective falls back to lam_basic through the framework. Layered on point-to-point, smp
 * keeps no messages of its own between calls: the checkpoint hooks have nothing to do (the rpi
 * drains the network; the sub-communicators are visited by the checkpoint like any other).
 */
export function actionsFor(
  h: Hierarchy,
  s: SmpSettings,
  note: (message: string) => void,
): CollActions {
  const inPlace = (send: NumericArray | null) => send ?? IN_PLACE;
  const area = (bytes: number) => areaFor(h, s, bytes, note);
  /** The length exchange (`reduction-exchange.ts`); ERR_TRUNCATE everywhere when lengths differ. */
  const agreeOnLengths = async (
    comm: CollComm,
    call: string,
    own: NumericArray,
    acc: NumericArray | null,
    op: ReduceOp,
  ) => {
    const part = { min: own.byteLength, max: own.byteLength, acc };
    await exchangeLengths(h, s, comm, part, op);
    const error = lengthsDiffer(part, call, comm.name);
    if (error) throw error;
  };
  /**
   * Whether a reduction goes to lam_basic by `coll_smp_<call>_min_bytes` (`min`): with a threshold
   * set, every rank first agrees on the lengths (the length exchange; ERR_TRUNCATE everywhere when
   * they differ), so all of them compare the same length and take the same path. Without one
   * (0, the default) nothing is exchanged here.
   */
  const belowAgreed = async (
    comm: CollComm,
    call: string,
    own: NumericArray,
    op: ReduceOp,
    min: number,
  ) => {
    if (min <= 0) return false;
    await agreeOnLengths(comm, call, own, null, op);
    return own.byteLength < min;
  };
  return {
    async barrier(comm) {
      await barrierHierarchical(h, comm);
    },
    bcast(comm, buf, root) {
      // Every path is chosen by the root's length, which each rank learns from its first message.
      const area = areaOpened(h, s);
      if (area !== undefined) return bcastAgreed(h, s, comm, buf, root, area);
      return openArea(h, s, note).then((a) => bcastAgreed(h, s, comm, buf, root, a));
    },
    async reduce(comm, send, recv, op, root) {
      const own = (send ?? recv)!;
      if (
        !mayReassociate(op, s) ||
        (await belowAgreed(comm, 'reduce', own, op, s.reduceMinBytes))
      ) {
        if (comm.rank === root) await h.flat.reduce(inPlace(send), op, root, recv!);
        else await h.flat.reduce(send, op, root);
        return;
      }
      // With the area, the lengths flow up the reduce's tree only (`reduce-up.ts`): no rank
      // waits for a round over the communicator, so consecutive reduces overlap.
      const shared = await openArea(h, s, note);
      if (shared) {
        await reduceUp(h, s, comm, shared, send, recv, op, root);
        return;
      }
      // Without it: below the area's threshold the exchange is the whole reduction (every rank
      // gets the result; the root keeps it in `recv`).
      const small = own.byteLength < s.shmMinBytes;
      const acc = !small ? null : comm.rank === root ? recv! : keptLike(h, own, SMALL_SLOT);
      if (acc && acc !== own) acc.set(own as never);
      await agreeOnLengths(comm, 'reduce', own, acc, op);
      if (small) return;
      await reduceHierarchical(h, comm, send, recv, op, root);
    },
    async allreduce(comm, send, recv, op) {
      if (
        !mayReassociate(op, s) ||
        (await belowAgreed(comm, 'allreduce', recv, op, s.allreduceMinBytes))
      ) {
        await h.flat.allreduce(inPlace(send), op, recv);
        return;
      }
      const small = recv.byteLength < s.shmMinBytes;
      if (small && send !== null) copyInto(recv, send);
      await agreeOnLengths(comm, 'allreduce', recv, small ? recv : null, op);
      if (small) return;
      const shared = await area(recv.byteLength);
      if (shared) await allreduceThroughArea(h, shared, send, recv, op);
      else await allreduceHierarchical(h, send, recv, op);
    },
    interrupt() {},
    checkpoint() {},
    continue() {},
    restart() {},
  };
}
