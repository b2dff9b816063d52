import { constants } from 'node:fs';
import { copyFile, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { tempNameFor } from './series-layout';

/**
 * Writes `bytes` to `path` so that after a crash the file is either absent or complete: write to
 * a temporary name, fsync it, rename it into place, fsync the directory (the rename itself is
 * only durable once the directory entry is on disk).
 */
export async function writeFileDurably(path: string, bytes: Uint8Array): Promise<void> {
  const temp = join(dirname(path), tempNameFor(basename(path)));
  try {
    const file = await open(temp, 'wx', 0o600);
    try {
      await file.writeFile(bytes);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  await syncDirectory(dirname(path));
}

/** fsync of a directory: makes creations, renames and removals in it durable. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Copies `from` to `to` with the guarantees of `writeFileDurably` (temp, fsync, rename, dir fsync). */
export async function copyFileDurably(from: string, to: string): Promise<void> {
  const temp = join(dirname(to), tempNameFor(basename(to)));
  try {
    await copyFile(from, temp, constants.COPYFILE_EXCL);
    const file = await open(temp, 'r+');
    try {
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, to);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  await syncDirectory(dirname(to));
}
