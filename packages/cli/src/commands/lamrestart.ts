import { CheckpointStore, chooseRestartSeries } from '@ssi/mpi';
import { UsageError } from '../run-command';
import { main as mpirunMain } from './mpirun';

const USAGE = `usage: lamrestart <checkpoint dir> [mpirun options…]
Restarts a checkpointed job from the latest series of its checkpoint directory, verified file by
file (series whose checkpoint did not finish are skipped, and said why). A lost or damaged rank
file is rebuilt from the series's duplicate or parity (one line per file); a series that cannot be
restored is refused, naming what is lost and the older series that would do. The mpirun
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
  // Skips unfinished series, rebuilds lost files from the plan's redundancy (one line each), and
  // refuses a committed series it cannot restore, naming the older series that would do.
  const chosen = await chooseRestartSeries(store, (line) => say(`lamrestart: ${line}`));
  const m = chosen.manifest!;
  say(
    `lamrestart: restarting job ${m.jobId} (${m.size} rank(s), cr module ${m.module}) from series ${chosen.series} of ${m.createdAt}`,
  );
  return handOver(['--cr-restart', store.seriesDir(chosen.series), ...rest]);
}
