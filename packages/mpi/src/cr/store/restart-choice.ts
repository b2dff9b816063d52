import type { CheckpointStore, CompleteSeries } from './checkpoint-store';
import { readManifest } from './series-check';
import { repairSeries } from './series-repair';
import { CheckpointStoreError } from './store-errors';

/**
 * The series a restart uses, the newest one committed: a series whose checkpoint did not finish
 * (no valid manifest) is skipped (`say` tells why); a committed one is verified file by file and
 * every lost or corrupt file is rebuilt from its duplicate or parity (`say` prints one line per
 * file). A committed series that cannot be restored is NOT silently passed over for an older
 * one: that would lose work without telling. The error names every file that is lost and cannot
 * be rebuilt, and the older series that would do (`mpirun --cr-restart <its dir>`), if any.
 */
export async function chooseRestartSeries(
  store: CheckpointStore,
  say: (line: string) => void,
): Promise<CompleteSeries> {
  const numbers = await store.seriesNumbers();
  if (numbers.length === 0) {
    throw new CheckpointStoreError(
      `${store.dir} holds no checkpoint series (expected series-<n> directories written by a checkpointed job)`,
    );
  }
  const skipped: string[] = [];
  for (const [i, n] of numbers.entries()) {
    const manifest = await readManifest(store.dir, n);
    if (typeof manifest === 'string') {
      skipped.push(`series ${n}: ${manifest}`);
      say(`skipping series ${n}: ${manifest}`);
      continue;
    }
    const repair = await repairSeries(store.dir, manifest, { dryRun: true });
    if (repair.unrecoverable.length > 0) {
      const older = await olderUsable(store, numbers.slice(i + 1));
      throw new CheckpointStoreError(
        `series ${n} cannot be restored: ${repair.unrecoverable.join('; ')}. ${older}`,
      );
    }
    if (repair.lost.length > 0) {
      const done = await repairSeries(store.dir, manifest);
      if (done.unrecoverable.length > 0) {
        throw new CheckpointStoreError(
          `series ${n} cannot be restored: ${done.unrecoverable.join('; ')}`,
        );
      }
      for (const line of done.rebuilt) say(`series ${n}: ${line}`);
    }
    return { series: n, manifest, dir: store.seriesDir(n) };
  }
  throw new CheckpointStoreError(
    `no complete checkpoint series in ${store.dir}: ${skipped.join('; ')}`,
  );
}

/** Which older series would do (complete, or restorable), said as the command that uses it. */
async function olderUsable(store: CheckpointStore, older: readonly number[]): Promise<string> {
  for (const n of older) {
    const manifest = await readManifest(store.dir, n);
    if (typeof manifest === 'string') continue;
    const r = await repairSeries(store.dir, manifest, { dryRun: true });
    if (r.unrecoverable.length === 0) {
      return `The older series ${n} is complete and would do: mpirun --cr-restart ${store.seriesDir(n)}`;
    }
  }
  return 'No older series would do: none is complete.';
}
