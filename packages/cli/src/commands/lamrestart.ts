import { CheckpointStore, CheckpointStoreError, type SeriesStatus } from '@ssi/mpi';
import { UsageError } from '../run-command';
import { main as mpirunMain } from './mpirun';

const USAGE = `usage: lamrestart <checkpoint dir> [mpirun options…]
Restarts a checkpointed job from the latest complete, verified series of its checkpoint
directory (newer series that are incomplete or damaged are skipped, and said why). The mpirun
options (nodes, -np is taken from the checkpoint, --ssi …) apply to the restarted job; its output
and exit status are those of the restarted job.`;

/** How the selected series is handed to mpirun: `mpirun --cr-restart <series dir> [options]`. */
export type HandOver = (argv: string[]) => Promise<number>;

export async function main(
  argv: string[],
  handOver: HandOver = mpirunMain,
  say: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<number> {
  const [dir, ...rest] = argv;
  if (dir === undefined) throw new UsageError(`which checkpoint directory?\n${USAGE}`);
  if (dir === '-h' || dir === '--help') throw new UsageError(USAGE, 0);
  if (dir.startsWith('-')) {
    throw new UsageError(`the checkpoint directory comes first (got ${dir})\n${USAGE}`);
  }
  const store = await CheckpointStore.open(dir, { create: false });
  const statuses = await store.examine();
  const chosen = statuses.find((s) => s.complete);
  if (!chosen) throw new CheckpointStoreError(noSeriesMessage(store.dir, statuses));
  for (const s of statuses) {
    if (s === chosen) break;
    say(`lamrestart: skipping series ${s.series}: ${s.reason}`);
  }
  const m = chosen.manifest!;
  say(
    `lamrestart: restarting job ${m.jobId} (${m.size} rank(s), cr module ${m.module}) from series ${chosen.series} of ${m.createdAt}`,
  );
  return handOver(['--cr-restart', store.seriesDir(chosen.series), ...rest]);
}

function noSeriesMessage(dir: string, statuses: SeriesStatus[]): string {
  if (statuses.length === 0) {
    return `${dir} holds no checkpoint series (expected series-<n> directories written by a checkpointed job)`;
  }
  const why = statuses.map((s) => `series ${s.series}: ${s.reason}`).join('; ');
  return `no complete checkpoint series in ${dir}: ${why}`;
}
