import { requestCheckpoint } from '../mpirun/checkpoint-client';
import { formatPhases, PREEMPTED_EXIT } from '../mpirun/checkpoint-protocol';
import { UsageError } from '../run-command';

const USAGE = `usage: lamcheckpoint <mpirun pid | job id> [--preempt] [--timeout <seconds>] [-v]
Asks a running job for a checkpoint: mpirun (started with --ssi cr <module>) propagates it to
every rank and writes a new series into the job's checkpoint directory. Progress is shown as it
happens; at the end the series number, bytes written and time taken. Default timeout 600 s.
-v also prints where the time went: prepare (every rank interrupted), drain+save (every rank
drained the network and saved; the slowest rank's own drain and save times), commit (manifest).
--preempt: a drain notice (the job must stop soon): every rank sees mpi.cr.draining, a checkpoint
is taken at once, then the job stops; mpirun exits with ${PREEMPTED_EXIT} ("checkpointed, restart me") and
prints the lamrestart command (143 if the checkpoint failed). SIGTERM to mpirun does the same.`;

const DEFAULT_TIMEOUT_S = 600;

/** lamcheckpoint: 0 when a series was written, 1 when refused / unreachable, 2 for usage errors. */
export async function main(argv: string[]): Promise<number> {
  const { target, timeoutS, verbose, preempt } = parseArgs(argv);
  const reply = await requestCheckpoint(target, {
    op: preempt ? 'preempt' : 'checkpoint',
    timeoutMs: timeoutS * 1000,
    onProgress: (text) => process.stdout.write(`${text}\n`),
  });
  if (reply.event === 'done') {
    process.stdout.write(
      `checkpoint series ${reply.series} of job ${reply.job}: ${reply.bytes} bytes in ${reply.ms.toFixed(1)} ms → ${reply.dir}\n`,
    );
    if (verbose && reply.phases) process.stdout.write(`${formatPhases(reply.phases)}\n`);
    if (preempt) {
      process.stdout.write(
        `job ${reply.job} preempted: it stops now (mpirun exits ${PREEMPTED_EXIT}); restart it with: lamrestart ${reply.dir}\n`,
      );
    }
    return 0;
  }
  const prefix = reply.event === 'refused' ? 'checkpoint refused: ' : '';
  process.stderr.write(`lamcheckpoint: ${prefix}${reply.reason}\n`);
  return 1;
}

interface Args {
  target: string;
  timeoutS: number;
  verbose: boolean;
  preempt: boolean;
}

function parseArgs(argv: string[]): Args {
  let target: string | undefined;
  let timeoutS = DEFAULT_TIMEOUT_S;
  let verbose = false;
  let preempt = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h' || arg === '--help') throw new UsageError(USAGE, 0);
    if (arg === '-v' || arg === '--verbose') {
      verbose = true;
      continue;
    }
    if (arg === '--preempt') {
      preempt = true;
      continue;
    }
    if (arg === '--timeout') {
      const value = argv[++i];
      timeoutS = Number(value);
      if (value === undefined || !Number.isFinite(timeoutS) || timeoutS <= 0) {
        throw new UsageError(`--timeout needs a number of seconds > 0 (got ${value})\n${USAGE}`);
      }
    } else if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}\n${USAGE}`);
    else if (target !== undefined) throw new UsageError(`unexpected argument ${arg}\n${USAGE}`);
    else target = arg;
  }
  if (target === undefined)
    throw new UsageError(`which job? give mpirun's pid or the job id\n${USAGE}`);
  return { target, timeoutS, verbose, preempt };
}
