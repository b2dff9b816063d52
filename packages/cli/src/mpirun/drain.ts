import type { HubControl, JobCheckpoints } from '@ssi/mpi';
import { CrMessage } from '@ssi/mpi';
import { type CheckpointOutcome, PREEMPTED_EXIT } from './checkpoint-protocol';
import type { EndJob } from './job';

/** Exit status of a drain whose checkpoint failed: a plain stop, as SIGTERM's (128 + 15). */
export const DRAIN_FAILED_EXIT = 143;

export interface DrainParts {
  control: HubControl;
  checkpoints: JobCheckpoints;
  end: EndJob;
  say(line: string): void;
  /** The asker's progress (`lamcheckpoint --preempt`); SIGTERM has none. */
  progress(text: string): void;
}

/**
 * A drain notice (PSC's drain, `tcs_drainoperation_`; AVS's preempt): the job must stop soon.
 * Every rank is told (`cr.drain`: `mpi.cr.draining`, `onDrain`), a checkpoint is taken at once
 * through the usual path, and the job ends: with PREEMPTED_EXIT and the lamrestart command when
 * the series was committed, as a plain stop (143) saying why when it was not.
 */
export async function drainJob(cause: string, p: DrainParts): Promise<CheckpointOutcome> {
  p.say(`mpirun: ${cause}: drain notice: checkpointing the job now, then it stops`);
  // A rank hears the notice only once its cr handlers are up (after MPI.init).
  if (await p.checkpoints.everyRankReady()) {
    p.control.send('all', CrMessage.DRAIN, { reason: cause });
  }
  // A fresh series: one under way (periodic) may have been saved before the ranks saw the
  // notice. The ranks stay frozen after it (stop): nothing runs on after the job's last image.
  const outcome = await p.checkpoints.request(p.progress, { fresh: true, stop: true });
  if (outcome.ok) {
    p.end(
      PREEMPTED_EXIT,
      `${cause}: the job is checkpointed as series ${outcome.series} and stops (exit ${PREEMPTED_EXIT}: restart me); ` +
        `restart it with: lamrestart ${outcome.dir}`,
      { kind: 'preempted' },
    );
  } else {
    p.end(
      DRAIN_FAILED_EXIT,
      `${cause}: the checkpoint of the drain failed (${outcome.reason}); stopping the job without one`,
      { kind: 'signal', signal: 'SIGTERM' },
    );
  }
  return outcome;
}
