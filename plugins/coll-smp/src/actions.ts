import type { CollActions, NumericArray, ReduceOp } from '@ssi/mpi';
import { IN_PLACE } from '@ssi/mpi';
import { allreduceSmall } from './allreduce-small';
import { areaFor } from './area-use';
import { barrierHierarchical } from './barrier';
import { bcastHierarchical } from './bcast';
import { bcastThroughArea } from './bcast-area';
import { bcastPipelined } from './bcast-pipeline';
import type { Hierarchy } from './hierarchy';
import type { SmpSettings } from './params';
import { allreduceHierarchical, reduceHierarchical } from './reduce';
import { allreduceThroughArea, reduceThroughArea } from './reduce-area';

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
  return {
    async barrier(comm) {
      await barrierHierarchical(h, comm);
    },
    async bcast(_comm, buf, root) {
      if (buf.byteLength < s.bcastMinBytes) {
        await h.flat.bcast(buf, root);
        return;
      }
      const shared = await area(buf.byteLength);
      if (shared) await bcastThroughArea(h, shared, buf, root);
      else if (s.bcastSegmentBytes > 0 && buf.byteLength > s.bcastSegmentBytes) {
        await bcastPipelined(h, buf, root, s.bcastSegmentBytes);
      } else await bcastHierarchical(h, buf, root);
    },
    async reduce(comm, send, recv, op, root) {
      const bytes = (send ?? recv)!.byteLength;
      if (mayReassociate(op, s) && bytes >= s.reduceMinBytes) {
        const shared = await area(bytes);
        if (shared) await reduceThroughArea(h, comm, shared, send, recv, op, root);
        else await reduceHierarchical(h, comm, send, recv, op, root);
      } else if (comm.rank === root) await h.flat.reduce(inPlace(send), op, root, recv!);
      else await h.flat.reduce(send, op, root);
    },
    async allreduce(comm, send, recv, op) {
      if (mayReassociate(op, s) && recv.byteLength >= s.allreduceMinBytes) {
        const shared = await area(recv.byteLength);
        if (shared) await allreduceThroughArea(h, shared, send, recv, op);
        else if (recv.byteLength < s.shmMinBytes) await allreduceSmall(h, comm, send, recv, op);
        else await allreduceHierarchical(h, send, recv, op);
      } else await h.flat.allreduce(inPlace(send), op, recv);
    },
    interrupt() {},
    checkpoint() {},
    continue() {},
    restart() {},
  };
}
