/** What Slurm tells the processes of an allocation about it. */
export interface SlurmJob {
  jobId: string;
  /** the hostlist expression and the variable it came from */
  nodeList: { text: string; varName: string };
  /** per-node counts and the variable they came from, when Slurm set one */
  counts?: { text: string; varName: string };
}

type Env = Record<string, string | undefined>;

/**
 * The Slurm allocation this process runs in (sbatch, salloc, or a step), or the reason it is
 * not in one. Node list: SLURM_JOB_NODELIST (SLURM_NODELIST on old Slurm); CPU counts:
 * SLURM_TASKS_PER_NODE, else SLURM_JOB_CPUS_PER_NODE.
 */
export function slurmJob(env: Env = process.env): SlurmJob | string {
  const jobId = env.SLURM_JOB_ID || env.SLURM_JOBID;
  if (!jobId) return 'not inside a Slurm allocation: SLURM_JOB_ID is not set';
  const nodeVar = env.SLURM_JOB_NODELIST !== undefined ? 'SLURM_JOB_NODELIST' : 'SLURM_NODELIST';
  const text = env[nodeVar];
  if (text === undefined) {
    return `inside Slurm job ${jobId} but SLURM_JOB_NODELIST is not set: is this an allocation (sbatch, salloc)?`;
  }
  const countVar = ['SLURM_TASKS_PER_NODE', 'SLURM_JOB_CPUS_PER_NODE'].find((v) => env[v]);
  return {
    jobId,
    nodeList: { text, varName: nodeVar },
    ...(countVar ? { counts: { text: env[countVar]!, varName: countVar } } : {}),
  };
}
