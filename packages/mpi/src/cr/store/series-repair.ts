import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { copyFileDurably, writeFileDurably } from './durable-write';
import { sha256Of } from './file-digest';
import type { RankFileRecord, RedundancyRecord, SeriesManifest } from './manifest';
import { rankFileProblem } from './series-check';
import { xorInto } from './xor';

/** A rank file of a committed series that does not verify, and why. */
export interface LostFile {
  rank: number;
  path: string;
  problem: string;
}

/** What `repairSeries` found: every lost file rebuilt (lines say how), or what could not be. */
export interface RepairOutcome {
  lost: LostFile[];
  /** one line per rebuilt file (empty when nothing was lost) */
  rebuilt: string[];
  /** why the series cannot be used, one entry per file that cannot be rebuilt (empty: usable) */
  unrecoverable: string[];
}

/**
 * Verifies every rank file of a committed series (length and sha256 against its manifest) and
 * rebuilds each lost or corrupt one from the series's redundancy: the duplicate in the second
 * location, or the XOR of its parity set's parity file and the set's other files. A rebuilt file
 * is verified against the manifest before it is written (durably) in place. With `dryRun` nothing
 * is written: the outcome says whether the series could be restored.
 */
export async function repairSeries(
  root: string,
  manifest: SeriesManifest,
  opts: { dryRun?: boolean } = {},
): Promise<RepairOutcome> {
  const lost: LostFile[] = [];
  for (const rec of [...manifest.ranks].sort((a, b) => a.rank - b.rank)) {
    const path = join(root, rec.file);
    const problem = await rankFileProblem(path, rec.bytes, rec.sha256);
    if (problem) lost.push({ rank: rec.rank, path, problem: withoutPath(problem, path) });
  }
  const out: RepairOutcome = { lost, rebuilt: [], unrecoverable: [] };
  const byRank = new Map(manifest.ranks.map((r) => [r.rank, r]));
  const lostRanks = new Set(lost.map((l) => l.rank));
  for (const l of lost) {
    const rec = byRank.get(l.rank)!;
    const why = describe(l);
    const r = await rebuildOne(root, manifest, rec, lostRanks, byRank, !!opts.dryRun);
    if (typeof r === 'string') out.unrecoverable.push(`${why}, and ${r}`);
    else out.rebuilt.push(`rebuilt rank ${l.rank}'s file ${l.path} (${l.problem}) ${r.from}`);
  }
  return out;
}

/** The problem without the file name it starts with ("missing", "checksum mismatch (…)"). */
function withoutPath(problem: string, path: string): string {
  if (!problem.startsWith(path)) return problem;
  const rest = problem.slice(path.length);
  return rest === ' is missing' ? 'missing' : rest.replace(/^: /, '');
}

function describe(l: LostFile): string {
  return `rank ${l.rank}'s file ${l.path} is lost (${l.problem})`;
}

/** Rebuilds one file, or says why it cannot be (a string). */
async function rebuildOne(
  root: string,
  manifest: SeriesManifest,
  rec: RankFileRecord,
  lostRanks: ReadonlySet<number>,
  byRank: ReadonlyMap<number, RankFileRecord>,
  dryRun: boolean,
): Promise<{ from: string } | string> {
  const red: RedundancyRecord | undefined = manifest.redundancy;
  const target = join(root, rec.file);
  if (!red) return `the series was taken with the local plan (no duplicate, no parity)`;
  if (red.plan === 'duplicate') {
    const copy = join(red.dir, rec.file);
    const problem = await rankFileProblem(copy, rec.bytes, rec.sha256);
    if (problem) return `its duplicate ${copy} is lost too (${withoutPath(problem, copy)})`;
    if (!dryRun) {
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      await copyFileDurably(copy, target);
    }
    return { from: `from the duplicate ${copy}` };
  }
  const set = red.sets.find((s) => s.ranks.includes(rec.rank));
  if (!set) return `no parity set of the manifest holds rank ${rec.rank}`;
  const others = set.ranks.filter((r) => r !== rec.rank);
  const alsoLost = others.filter((r) => lostRanks.has(r));
  if (alsoLost.length > 0) {
    return `rank(s) ${alsoLost.join(', ')} of its parity set (ranks ${set.ranks.join(', ')}) are lost too: one parity file rebuilds one lost file per set`;
  }
  const parityPath = join(red.dir, set.file);
  const parityProblem = await rankFileProblem(parityPath, set.bytes, set.sha256);
  if (parityProblem) {
    return `its parity file ${parityPath} is lost too (${withoutPath(parityProblem, parityPath)})`;
  }
  const xor = await readFile(parityPath);
  for (const r of others) xorInto(xor, await readFile(join(root, byRank.get(r)!.file)));
  if (xor.length < rec.bytes) return `the parity file is shorter than the file it must rebuild`;
  const rebuilt = xor.subarray(0, rec.bytes);
  if (sha256Of(rebuilt) !== rec.sha256) {
    return `the file rebuilt from parity does not match its recorded sha256`;
  }
  if (!dryRun) {
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    await writeFileDurably(target, rebuilt);
  }
  return {
    from: `from parity set ${set.set} (${parityPath} XOR the files of rank(s) ${others.join(', ')})`,
  };
}
