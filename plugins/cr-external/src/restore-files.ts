import { existsSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JobContact } from '@ssi/mpi';

/**
 * The files through which a restored process and the command a new job started in its place
 * (the restore runner) find each other, in the process's directory of the series
 * (`<series>/external-<rank>/`). A restored process keeps the environment it was saved with, so
 * it cannot be told its new job any other way; it finds these files by the path it already knows.
 */
export interface RestoreFiles {
  /** The new job's contact (`JobContact`, JSON; holds the job's secret: mode 0600). */
  contact: string;
  /** Written by the restored process once it joined the new job: `{ pid }`. */
  attached: string;
  /** Written by the restored process as it exits: its exit code. */
  exit: string;
  /** FIFOs the runner forwards into the new job: the restored process's stdout and stderr. */
  stdout: string;
  stderr: string;
}

export function restoreFiles(home: string): RestoreFiles {
  return {
    contact: join(home, 'contact.json'),
    attached: join(home, 'attached.json'),
    exit: join(home, 'exit'),
    stdout: join(home, 'restored-stdout'),
    stderr: join(home, 'restored-stderr'),
  };
}

/** Removes what an earlier restart of the same image left. */
export async function clearRestoreFiles(f: RestoreFiles): Promise<void> {
  await Promise.all(Object.values(f).map((p) => rm(p, { force: true })));
}

/** Writes `value` as JSON atomically (a reader never sees half a file). */
export async function writeJson(path: string, value: unknown): Promise<void> {
  await writeFile(`${path}.tmp`, JSON.stringify(value), { mode: 0o600 });
  await rename(`${path}.tmp`, path);
}

/** The contact file: the new job's, and the pid of the runner that stands for the process there. */
export interface RestoreContact extends JobContact {
  runner: number;
}

/** The contact of the job that adopts this process, or null while there is none. */
export async function readContact(f: RestoreFiles): Promise<RestoreContact | null> {
  if (!existsSync(f.contact)) return null;
  const c = JSON.parse(await readFile(f.contact, 'utf8')) as RestoreContact;
  if (typeof c !== 'object' || c === null || typeof c.env !== 'object' || !c.sessionDir) {
    throw new Error(`${f.contact} is not a job contact ({ env, sessionDir })`);
  }
  return c;
}
