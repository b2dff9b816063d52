/** What PBS tells the processes of a job about it (Ch. 4.1.3, step 1: "am I in a PBS job?"). */
export interface PbsJob {
  jobId: string;
  nodeFile: string;
  /** PBS_BATCH or PBS_INTERACTIVE */
  environment: string;
}

/**
 * The PBS job this process runs in, or the reason it is not in one. PBS (OpenPBS, PBS Pro,
 * Torque) sets PBS_ENVIRONMENT, PBS_JOBID and PBS_NODEFILE in every job.
 */
export function pbsJob(env: Record<string, string | undefined> = process.env): PbsJob | string {
  const missing = ['PBS_ENVIRONMENT', 'PBS_JOBID', 'PBS_NODEFILE'].filter((v) => !env[v]);
  if (missing.length > 0) {
    return `not inside a PBS job: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set (PBS sets PBS_ENVIRONMENT, PBS_JOBID and PBS_NODEFILE in every job)`;
  }
  const environment = env.PBS_ENVIRONMENT!;
  if (environment !== 'PBS_BATCH' && environment !== 'PBS_INTERACTIVE') {
    return `not inside a PBS job: PBS_ENVIRONMENT is "${environment}", not PBS_BATCH or PBS_INTERACTIVE`;
  }
  return { jobId: env.PBS_JOBID!, nodeFile: env.PBS_NODEFILE!, environment };
}
