import { ErrorClass, MpiError } from './errors';
import type { ProcLocation } from './job-runtime';
import { badLocation, type Proc, sortProcs } from './proc';

/**
 * Rebuilds the sorted process list for a restarted job (Ch. 7): the same world ranks, each now
 * at the location a new GPS exchange reported. The `Proc` objects are kept (groups and
 * communicators reference them) and relocated; the list is sorted again by the rule of Ch. 5.1.2
 * (`sortProcs`), in place, so every process again holds the same order. Returns `procs`.
 *
 * `locations` must describe exactly the world ranks of `procs`, once each, in any order; anything
 * else (another job size, a missing or duplicate rank, a malformed GPS) throws before any entry
 * is changed.
 */
export function rebuildProcessList(procs: Proc[], locations: readonly ProcLocation[]): Proc[] {
  if (!Array.isArray(locations)) {
    throw new MpiError(ErrorClass.ERR_ARG, 'rebuildProcessList needs an array of locations');
  }
  if (locations.length !== procs.length) {
    throw new MpiError(
      ErrorClass.ERR_ARG,
      `the new GPS exchange has ${locations.length} process(es) but the job has ` +
        `${procs.length}: a restarted job keeps its size`,
    );
  }
  const byRank = new Map<number, ProcLocation>();
  locations.forEach((where, i) => {
    const why = badLocation(where);
    if (why)
      throw new MpiError(ErrorClass.ERR_ARG, `location ${i} of the new GPS exchange: ${why}`);
    const rank = where.gps.grank;
    if (byRank.has(rank)) {
      throw new MpiError(
        ErrorClass.ERR_ARG,
        `the new GPS exchange names world rank ${rank} twice (locations ${locations.indexOf(byRank.get(rank)!)} and ${i})`,
      );
    }
    byRank.set(rank, where);
  });
  const missing = procs.filter((p) => !byRank.has(p.gps.grank)).map((p) => p.gps.grank);
  if (missing.length > 0) {
    const extra = [...byRank.keys()].filter((r) => !procs.some((p) => p.gps.grank === r));
    throw new MpiError(
      ErrorClass.ERR_ARG,
      `the new GPS exchange has no location for world rank(s) ${missing.join(', ')}` +
        (extra.length > 0 ? ` and names rank(s) ${extra.join(', ')} that are not in the job` : ''),
    );
  }
  for (const p of procs) p.relocate(byRank.get(p.gps.grank)!);
  return sortProcs(procs);
}
