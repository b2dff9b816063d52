/**
 * Extra cleanup of a session directory's resources, run by `lamclean` (in each lamd) and by
 * `wipe` (on each node).
 *
 * HOOK(@ssi/shm): once @ssi/shm exists, this is where `cleanStaleSegments({ sessionDir })` is
 * called, so that shared-memory segments of dead jobs go away with them. @ssi/lam does not
 * depend on @ssi/shm yet; until then, code that owns such resources registers a cleaner here.
 */
export type SessionCleaner = (opts: { sessionDir: string }) => void | Promise<void>;

const cleaners: SessionCleaner[] = [];

export function registerSessionCleaner(cleaner: SessionCleaner): void {
  cleaners.push(cleaner);
}

/** Runs every cleaner; a failing one is reported and does not stop the others. */
export async function runSessionCleanup(sessionDir: string): Promise<string[]> {
  const problems: string[] = [];
  for (const clean of cleaners) {
    try {
      await clean({ sessionDir });
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  return problems;
}
