import type { Communicator } from '../comm';
import { UNDEFINED } from '../constants';
import { ErrorClass, MpiError } from '../errors';
import { CartTopology } from './cart';
import { DistGraphTopology, GraphTopology } from './graph';
import { cartOf } from './topology';

/**
 * The collective calls that make communicators with a topology: each checks its arguments,
 * then splits the old communicator (a fresh context; processes outside the grid get null) and
 * attaches the topology. Errors go through the old communicator's error handler.
 */

/**
 * `MPI_Cart_create`. With `reorder`, ranks are grouped by node (processes of one node get
 * consecutive ranks, so grid neighbours tend to share a node); without it, rank i keeps rank i.
 */
export function cartCreate(
  comm: Communicator,
  dims: readonly number[],
  periods: readonly boolean[] | undefined,
  reorder: boolean,
  name: string | undefined,
): Promise<Communicator | null> {
  let topology: CartTopology;
  let key: number;
  try {
    topology = checkedCart(comm, dims, periods);
    key = reorder ? nodeOrderKey(comm) : comm.rank;
  } catch (err) {
    return Promise.reject(comm.raiseSync(err, 'cartCreate'));
  }
  const color = key < topology.size ? 0 : UNDEFINED;
  return withTopology(comm.split(color, key, name ?? `${comm.name}.cart`), topology);
}

function checkedCart(
  comm: Communicator,
  dims: readonly number[],
  periods: readonly boolean[] | undefined,
): CartTopology {
  if (comm.isInter) {
    throw new MpiError(ErrorClass.ERR_COMM, `cartCreate: ${comm.name} is an intercommunicator`);
  }
  if (!Array.isArray(dims)) {
    throw new MpiError(ErrorClass.ERR_DIMS, 'cartCreate: dims must be an array of sizes');
  }
  dims.forEach((d, i) => {
    if (!Number.isInteger(d) || d < 1) {
      throw new MpiError(
        ErrorClass.ERR_DIMS,
        `cartCreate: dims[${i}] = ${String(d)} is not a size >= 1 (use dimsCreate to choose sizes)`,
      );
    }
  });
  const p = periods ?? dims.map(() => false);
  if (!Array.isArray(p) || p.length !== dims.length) {
    throw new MpiError(
      ErrorClass.ERR_ARG,
      `cartCreate: periods must have ${dims.length} entries, one per dimension`,
    );
  }
  const topology = new CartTopology([...dims], p.map(Boolean));
  if (topology.size > comm.size) {
    throw new MpiError(
      ErrorClass.ERR_DIMS,
      `cartCreate: a [${dims}] grid needs ${topology.size} processes but ${comm.name} has ${comm.size}`,
    );
  }
  return topology;
}

/** This rank's position when the ranks are grouped by node (nodes in order of lowest rank). */
function nodeOrderKey(comm: Communicator): number {
  return comm.locality.nodes.flat().indexOf(comm.rank);
}

/**
 * `MPI_Cart_sub`: one communicator per slice that keeps the dimensions where `remainDims` is
 * true; its grid is those dimensions.
 */
export function cartSub(
  comm: Communicator,
  remainDims: readonly boolean[],
  name: string | undefined,
): Promise<Communicator | null> {
  let color = 0;
  let key = 0;
  let topology: CartTopology;
  try {
    const cart = cartOf(comm.topology, comm.name, 'cartSub');
    if (!Array.isArray(remainDims) || remainDims.length !== cart.dims.length) {
      throw new MpiError(
        ErrorClass.ERR_ARG,
        `cartSub: remainDims must have ${cart.dims.length} entries, one per dimension`,
      );
    }
    const coords = cart.coords(comm.rank);
    cart.dims.forEach((n, d) => {
      if (remainDims[d]) key = key * n + coords[d]!;
      else color = color * n + coords[d]!;
    });
    topology = new CartTopology(
      cart.dims.filter((_, d) => remainDims[d]),
      cart.periods.filter((_, d) => remainDims[d]),
    );
  } catch (err) {
    return Promise.reject(comm.raiseSync(err, 'cartSub'));
  }
  return withTopology(comm.split(color, key, name ?? `${comm.name}.sub`), topology);
}

/** `MPI_Graph_create`: processes beyond `index.length` get null. Reordering keeps ranks. */
export function graphCreate(
  comm: Communicator,
  index: readonly number[],
  edges: readonly number[],
  name: string | undefined,
): Promise<Communicator | null> {
  try {
    if (comm.isInter) {
      throw new MpiError(ErrorClass.ERR_COMM, `graphCreate: ${comm.name} is an intercommunicator`);
    }
    GraphTopology.check(index, edges, comm.size);
  } catch (err) {
    return Promise.reject(comm.raiseSync(err, 'graphCreate'));
  }
  const topology = new GraphTopology([...index], [...edges]);
  const color = comm.rank < index.length ? 0 : UNDEFINED;
  return withTopology(comm.split(color, comm.rank, name ?? `${comm.name}.graph`), topology);
}

/**
 * `MPI_Dist_graph_create_adjacent`: every process names its own incoming and outgoing
 * neighbours; the new communicator has the old one's ranks.
 */
export async function distGraphCreateAdjacent(
  comm: Communicator,
  sources: readonly number[],
  destinations: readonly number[],
  name: string | undefined,
): Promise<Communicator> {
  try {
    for (const [what, list] of [
      ['sources', sources],
      ['destinations', destinations],
    ] as const) {
      if (!Array.isArray(list)) {
        throw new MpiError(ErrorClass.ERR_ARG, `distGraphCreateAdjacent: ${what} must be an array`);
      }
      list.forEach((r, i) => {
        if (!Number.isInteger(r) || r < 0 || r >= comm.size) {
          throw new MpiError(
            ErrorClass.ERR_RANK,
            `distGraphCreateAdjacent: ${what}[${i}] = ${String(r)} is not a rank of ${comm.name} (0-${comm.size - 1})`,
          );
        }
      });
    }
  } catch (err) {
    throw comm.raiseSync(err, 'distGraphCreateAdjacent');
  }
  const c = await comm.dup(name ?? `${comm.name}.distGraph`);
  c.topology = new DistGraphTopology([...sources], [...destinations]);
  return c;
}

async function withTopology(
  made: Promise<Communicator | null>,
  topology: CartTopology | GraphTopology,
): Promise<Communicator | null> {
  const c = await made;
  if (c) c.topology = topology;
  return c;
}
