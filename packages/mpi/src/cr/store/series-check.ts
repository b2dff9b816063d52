import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { sha256OfFile } from './file-digest';
import { manifestProblem, type SeriesManifest } from './manifest';
import { MANIFEST_FILE, seriesDirName } from './series-layout';

/** What the store found of one series: complete (usable for restart), or why not. */
export interface SeriesStatus {
  series: number;
  complete: boolean;
  /** why the series cannot be used, for the person choosing a checkpoint */
  reason?: string;
  /** the manifest, when the series is complete */
  manifest?: SeriesManifest;
}

/**
 * Verifies one series: its manifest is present and valid, and every rank file it lists exists
 * with the recorded length and sha256. Never throws for what it finds on disk; the status says it.
 */
export async function checkSeries(root: string, series: number): Promise<SeriesStatus> {
  const manifest = await readManifest(root, series);
  if (typeof manifest === 'string') return { series, complete: false, reason: manifest };
  for (const rec of [...manifest.ranks].sort((a, b) => a.rank - b.rank)) {
    const fileProblem = await rankFileProblem(join(root, rec.file), rec.bytes, rec.sha256);
    if (fileProblem) return { series, complete: false, reason: fileProblem };
  }
  return { series, complete: true, manifest };
}

/**
 * The valid manifest of a series (it was committed), or why there is none: the checkpoint did
 * not finish, or the manifest is unreadable or invalid.
 */
export async function readManifest(root: string, series: number): Promise<SeriesManifest | string> {
  const dir = join(root, seriesDirName(series));
  let text: string;
  try {
    if (!(await stat(dir)).isDirectory()) return `${dir} is not a directory`;
    text = await readFile(join(dir, MANIFEST_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      return 'no MANIFEST.json (the checkpoint did not finish)';
    }
    return `cannot read ${join(dir, MANIFEST_FILE)}: ${(err as Error).message}`;
  }
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch {
    return `${join(dir, MANIFEST_FILE)} is not valid JSON`;
  }
  const problem = manifestProblem(manifest, series);
  if (problem) return `${join(dir, MANIFEST_FILE)}: ${problem}`;
  return manifest as SeriesManifest;
}

/** Why the file at `path` is not the one recorded (missing, length, checksum), or undefined. */
export async function rankFileProblem(
  path: string,
  bytes: number,
  sha256: string,
): Promise<string | undefined> {
  try {
    const size = (await stat(path)).size;
    if (size !== bytes) {
      return `${path}: ${size} bytes, the manifest records ${bytes} (file damaged or truncated)`;
    }
    if ((await sha256OfFile(path)) !== sha256) {
      return `${path}: checksum mismatch (file damaged or truncated)`;
    }
    return undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return `${path} is missing`;
    return `cannot read ${path}: ${(err as Error).message}`;
  }
}
