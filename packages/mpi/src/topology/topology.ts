import { ErrorClass, MpiError } from '../errors';
import { CartTopology } from './cart';
import { DistGraphTopology, GraphTopology } from './graph';

/** What a communicator may carry (`MPI_Topo_test`); dup copies it, split and create do not. */
export type Topology = CartTopology | GraphTopology | DistGraphTopology;

/** The Cartesian topology of a communicator, or ERR_TOPOLOGY naming the call. */
export function cartOf(topology: Topology | null, name: string, call: string): CartTopology {
  if (topology instanceof CartTopology) return topology;
  throw new MpiError(
    ErrorClass.ERR_TOPOLOGY,
    `${call}: ${name} has ${describe(topology)}; make one with cartCreate`,
  );
}

/** The graph topology of a communicator, or ERR_TOPOLOGY naming the call. */
export function graphOf(topology: Topology | null, name: string, call: string): GraphTopology {
  if (topology instanceof GraphTopology) return topology;
  throw new MpiError(
    ErrorClass.ERR_TOPOLOGY,
    `${call}: ${name} has ${describe(topology)}; make one with graphCreate`,
  );
}

/** The distributed graph topology of a communicator, or ERR_TOPOLOGY naming the call. */
export function distGraphOf(
  topology: Topology | null,
  name: string,
  call: string,
): DistGraphTopology {
  if (topology instanceof DistGraphTopology) return topology;
  throw new MpiError(
    ErrorClass.ERR_TOPOLOGY,
    `${call}: ${name} has ${describe(topology)}; make one with distGraphCreateAdjacent`,
  );
}

function describe(t: Topology | null): string {
  return t === null ? 'no topology' : `a ${t.kind} topology`;
}
