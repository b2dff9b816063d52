import { ErrorClass, MpiError } from '../errors';

/**
 * A graph topology (MPI-1 §6.4): node i's neighbours are `edges[index[i-1] .. index[i])`
 * (`index[-1]` = 0), MPI-1's compressed form.
 */
export class GraphTopology {
  readonly kind = 'graph';

  constructor(
    readonly index: readonly number[],
    readonly edges: readonly number[],
  ) {}

  /** Checks MPI-1's rules; the error names the entry that breaks them. */
  static check(index: readonly number[], edges: readonly number[], size: number): void {
    const call = 'graphCreate';
    if (!Array.isArray(index) || !Array.isArray(edges)) {
      throw new MpiError(ErrorClass.ERR_ARG, `${call}: index and edges must be arrays`);
    }
    if (index.length > size) {
      throw new MpiError(
        ErrorClass.ERR_ARG,
        `${call}: ${index.length} nodes but the communicator has ${size} processes`,
      );
    }
    let prev = 0;
    index.forEach((v, i) => {
      if (!Number.isInteger(v) || v < prev || v > edges.length) {
        throw new MpiError(
          ErrorClass.ERR_ARG,
          `${call}: index[${i}] = ${String(v)}; index holds non-decreasing edge counts up to ${edges.length}`,
        );
      }
      prev = v;
    });
    if (index.length > 0 && index[index.length - 1] !== edges.length) {
      throw new MpiError(
        ErrorClass.ERR_ARG,
        `${call}: the last index entry (${index[index.length - 1]}) must equal the number of edges (${edges.length})`,
      );
    }
    edges.forEach((e, i) => {
      if (!Number.isInteger(e) || e < 0 || e >= index.length) {
        throw new MpiError(
          ErrorClass.ERR_RANK,
          `${call}: edges[${i}] = ${String(e)} is not a node (0-${index.length - 1})`,
        );
      }
    });
  }

  /** `MPI_Graph_neighbors`. */
  neighbors(rank: number): number[] {
    if (!Number.isInteger(rank) || rank < 0 || rank >= this.index.length) {
      throw new MpiError(
        ErrorClass.ERR_RANK,
        `graphNeighbors: rank ${String(rank)} is not a node (0-${this.index.length - 1})`,
      );
    }
    const from = rank === 0 ? 0 : this.index[rank - 1]!;
    return this.edges.slice(from, this.index[rank]!);
  }
}

/**
 * A distributed graph topology (MPI-2.2 `MPI_Dist_graph_create_adjacent`): each process knows
 * only its own incoming and outgoing neighbours.
 */
export class DistGraphTopology {
  readonly kind = 'distGraph';

  constructor(
    readonly sources: readonly number[],
    readonly destinations: readonly number[],
  ) {}
}
