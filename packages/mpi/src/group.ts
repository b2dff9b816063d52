import { type Comparison, IDENT, SIMILAR, UNDEFINED, UNEQUAL } from './constants';
import { ErrorClass, MpiError } from './errors';
import type { Proc } from './proc';

/** A rank range of `rangeIncl` / `rangeExcl`: first, last (inclusive), stride. */
export type RankRange = readonly [first: number, last: number, stride: number];

/**
 * An ordered set of processes (`MPI_Group`). Groups are values: every operation returns a new
 * group; nothing here communicates. `rank` is this process's rank in the group, or UNDEFINED.
 */
export class Group {
  /** @internal */
  constructor(
    /** @internal Process entries in rank order. */
    readonly procs: readonly Proc[],
    /** @internal This process's entry (to compute `rank`). */
    private readonly me: Proc,
  ) {}

  /** The empty group (`MPI_GROUP_EMPTY`) as seen by `me`. */
  static empty(me: Proc): Group {
    return new Group([], me);
  }

  get size(): number {
    return this.procs.length;
  }

  /** This process's rank in the group, or UNDEFINED if it is not a member. */
  get rank(): number {
    const i = this.procs.indexOf(this.me);
    return i < 0 ? UNDEFINED : i;
  }

  /** The ranks in `other` of the processes with `ranks` in this group (UNDEFINED where absent). */
  translateRanks(ranks: readonly number[], other: Group): number[] {
    return ranks.map((r) => {
      this.checkRank(r, 'translateRanks');
      const i = other.procs.indexOf(this.procs[r]!);
      return i < 0 ? UNDEFINED : i;
    });
  }

  /** IDENT: same members in the same order; SIMILAR: same members; else UNEQUAL. */
  compare(other: Group): Comparison {
    if (this.size !== other.size) return UNEQUAL;
    if (this.procs.every((p, i) => other.procs[i] === p)) return IDENT;
    const theirs = new Set(other.procs);
    return this.procs.every((p) => theirs.has(p)) ? SIMILAR : UNEQUAL;
  }

  /** This group's members, then the other's that are not in this one. */
  union(other: Group): Group {
    const mine = new Set(this.procs);
    return this.derive([...this.procs, ...other.procs.filter((p) => !mine.has(p))]);
  }

  /** This group's members that are also in `other`, in this group's order. */
  intersection(other: Group): Group {
    const theirs = new Set(other.procs);
    return this.derive(this.procs.filter((p) => theirs.has(p)));
  }

  /** This group's members that are not in `other`, in this group's order. */
  difference(other: Group): Group {
    const theirs = new Set(other.procs);
    return this.derive(this.procs.filter((p) => !theirs.has(p)));
  }

  /** The members with `ranks`, in that order (distinct, valid ranks). */
  incl(ranks: readonly number[]): Group {
    this.checkDistinct(ranks, 'incl');
    return this.derive(ranks.map((r) => this.procs[r]!));
  }

  /** The members without `ranks`, in this group's order. */
  excl(ranks: readonly number[]): Group {
    this.checkDistinct(ranks, 'excl');
    const drop = new Set(ranks);
    return this.derive(this.procs.filter((_, i) => !drop.has(i)));
  }

  /** `incl` of the ranks the ranges name: [first, last, stride] each. */
  rangeIncl(ranges: readonly RankRange[]): Group {
    return this.incl(this.expand(ranges, 'rangeIncl'));
  }

  /** `excl` of the ranks the ranges name. */
  rangeExcl(ranges: readonly RankRange[]): Group {
    return this.excl(this.expand(ranges, 'rangeExcl'));
  }

  private derive(procs: Proc[]): Group {
    return new Group(procs, this.me);
  }

  private checkRank(r: number, call: string): void {
    if (!Number.isInteger(r) || r < 0 || r >= this.size) {
      throw new MpiError(
        ErrorClass.ERR_RANK,
        `Group.${call}: invalid rank ${String(r)}; the group has ranks 0-${this.size - 1}`,
      );
    }
  }

  private checkDistinct(ranks: readonly number[], call: string): void {
    const seen = new Set<number>();
    for (const r of ranks) {
      this.checkRank(r, call);
      if (seen.has(r))
        throw new MpiError(ErrorClass.ERR_RANK, `Group.${call}: rank ${r} appears twice`);
      seen.add(r);
    }
  }

  private expand(ranges: readonly RankRange[], call: string): number[] {
    const out: number[] = [];
    for (const [first, last, stride] of ranges) {
      if (!Number.isInteger(stride) || stride === 0 || (last - first) * stride < 0) {
        throw new MpiError(
          ErrorClass.ERR_ARG,
          `Group.${call}: range [${first}, ${last}, ${stride}] never reaches its last rank`,
        );
      }
      for (let r = first; stride > 0 ? r <= last : r >= last; r += stride) out.push(r);
    }
    return out;
  }
}
