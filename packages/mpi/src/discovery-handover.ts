import { readdirSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isSsiError, packageDirs, readPackageManifest, visibleNodeModules } from '@ssi/core';

/**
 * Module discovery once per job (issue #21): mpirun, which scans the `node_modules` trees anyway,
 * hands every rank the list of module packages in each tree it scanned, so that a rank reads the
 * manifests of those few packages instead of every package.json of the tree (~1,000 stat calls).
 * The rank still reads each module's manifest itself (versions, entries, compatibility are its
 * own); only the search is skipped. A tree the hand-over does not cover, or whose directory (or
 * one of its `@scope` directories) changed since, is scanned by the rank as before; a hand-over
 * from another host, of another format or unreadable is ignored whole. It is never an error.
 * `SSI_DISCOVERY_HANDOVER=off` in mpirun's environment turns it off (every rank scans, as
 * before): to compare the two, or to rule it out.
 */
export const DISCOVERY_HANDOVER_ENV = 'SSI_DISCOVERY_HANDOVER';

const FORMAT = 'ssi-discovery-handover/1';
const OFF = 'off';
/** Larger hand-overs are not sent (an environment variable is limited); ranks scan then. */
const MAX_HANDOVER_CHARS = 64 * 1024;

interface HandoverTree {
  /** The `node_modules` directory. */
  dir: string;
  /** mtimeMs of `dir` and of each `@scope` directory in it, when scanned: a change means stale. */
  mtimes: Record<string, number>;
  /** Its package directories whose package.json has an `ssi` field (or is unreadable). */
  packages: string[];
}

interface Handover {
  format: typeof FORMAT;
  host: string;
  trees: HandoverTree[];
}

/** This @ssi/mpi's package directory: ranks search from it too (see mpi.ts). */
const MPI_INSTALL_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * mpirun's side: scans the trees visible from `searchFrom` (the ranks' working and program
 * directories) and from this @ssi/mpi's install, and returns the environment to give every rank,
 * or {} if it would be too large.
 */
export function discoveryHandoverEnv(
  searchFrom: readonly string[],
  env: Record<string, string | undefined> = process.env,
): Record<string, string> {
  if (env[DISCOVERY_HANDOVER_ENV] === OFF) return { [DISCOVERY_HANDOVER_ENV]: OFF };
  const trees = visibleNodeModules([...searchFrom, MPI_INSTALL_DIR]).map(scanTree);
  const value = JSON.stringify({ format: FORMAT, host: hostname(), trees } satisfies Handover);
  return value.length <= MAX_HANDOVER_CHARS ? { [DISCOVERY_HANDOVER_ENV]: value } : {};
}

function scanTree(dir: string): HandoverTree {
  const packages = packageDirs(dir).filter(isModuleCandidate);
  return { dir, mtimes: treeMtimes(dir) ?? {}, packages };
}

/** Module packages, and packages whose manifest is bad: the rank reports those itself. */
function isModuleCandidate(dir: string): boolean {
  try {
    return readPackageManifest(join(dir, 'package.json')) !== null;
  } catch (err) {
    if (isSsiError(err)) return true;
    throw err;
  }
}

function treeMtimes(dir: string): Record<string, number> | undefined {
  try {
    const out: Record<string, number> = { [dir]: statSync(dir).mtimeMs };
    for (const name of readdirSync(dir)) {
      if (name.startsWith('@')) out[join(dir, name)] = statSync(join(dir, name)).mtimeMs;
    }
    return out;
  } catch {
    return undefined;
  }
}

/** The rank's side: what `createSsiContext` takes, and how it went (for `mpi_verbose`). */
export interface DiscoveryHandoverUse {
  /** For `packagesIn` of discovery; undefined when there is no usable hand-over. */
  packagesIn?: (nodeModules: string) => readonly string[] | undefined;
  /** Trees taken from the hand-over, and trees this rank scanned itself (with why). */
  used: string[];
  scanned: { dir: string; why: string }[];
  /** Why the whole hand-over was ignored, if it was. */
  ignored?: string;
}

export function readDiscoveryHandover(
  env: Record<string, string | undefined> = process.env,
  host = hostname(),
): DiscoveryHandoverUse {
  const use: DiscoveryHandoverUse = { used: [], scanned: [] };
  const raw = env[DISCOVERY_HANDOVER_ENV];
  if (!raw || raw === OFF) return use;
  const handover = parseHandover(raw);
  if (typeof handover === 'string') return { ...use, ignored: handover };
  if (handover.host !== host) {
    return { ...use, ignored: `it is from host ${handover.host}, this is ${host}` };
  }
  const trees = new Map(handover.trees.map((t) => [t.dir, t]));
  use.packagesIn = (dir) => {
    const tree = trees.get(dir);
    const why = !tree ? 'not in the hand-over' : staleness(tree);
    if (why) {
      use.scanned.push({ dir, why });
      return undefined;
    }
    use.used.push(dir);
    return tree!.packages;
  };
  return use;
}

/** The hand-over, or why it cannot be used. */
function parseHandover(raw: string): Handover | string {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    return `${DISCOVERY_HANDOVER_ENV} is not valid JSON (${(err as Error).message})`;
  }
  const h = value as Partial<Handover> | null;
  if (!h || h.format !== FORMAT) return `${DISCOVERY_HANDOVER_ENV} is not of format ${FORMAT}`;
  const treeOk = (t: HandoverTree) =>
    typeof t?.dir === 'string' &&
    Array.isArray(t.packages) &&
    t.packages.every((p) => typeof p === 'string') &&
    t.mtimes !== null &&
    typeof t.mtimes === 'object' &&
    Object.values(t.mtimes).every((m) => typeof m === 'number');
  if (typeof h.host !== 'string' || !Array.isArray(h.trees) || !h.trees.every(treeOk)) {
    return `${DISCOVERY_HANDOVER_ENV} has a bad shape (expected { format, host, trees: [{ dir, mtimes, packages }] })`;
  }
  return h as Handover;
}

/** Why a tree's listing may be out of date (undefined: it is not). */
function staleness(tree: HandoverTree): string | undefined {
  const now = treeMtimes(tree.dir);
  if (!now) return 'it cannot be read here';
  const then = tree.mtimes;
  const same =
    Object.keys(now).length === Object.keys(then).length &&
    Object.entries(now).every(([dir, mtime]) => then[dir] === mtime);
  return same ? undefined : 'it changed since mpirun scanned it';
}

/** What a rank says of its discovery under `mpi_verbose` 1 and more. */
export function describeHandoverUse(use: DiscoveryHandoverUse): string[] {
  if (use.ignored) return [`discovery: mpirun's hand-over ignored: ${use.ignored}; scanned here`];
  if (!use.packagesIn) return [];
  const lines = [`discovery: ${use.used.length} node_modules tree(s) from mpirun's hand-over`];
  for (const s of use.scanned) lines.push(`discovery: scanned ${s.dir} here: ${s.why}`);
  return lines;
}
