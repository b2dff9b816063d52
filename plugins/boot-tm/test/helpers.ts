import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The stand-in for PBS's pbsdsh (see its header): NOT PBS. */
export const PBSDSH = join(import.meta.dirname, 'fixtures', 'pbsdsh');
export type { Ran } from '@ssi/cli/testing';
export { envOf, runCli, startCli, waitChild, waitFor } from '@ssi/cli/testing';
export { jobsProgram as MPI_JOB } from '@ssi/mpi/testing';

export interface JobProcess {
  pid: number;
  cmdline: string;
}

/**
 * Every live process that belongs to PBS job `jobId`: what a MOM tracks. The stand-in PBS job's
 * processes (lamboot, the pbsdsh launchers, the tasks on the nodes, the lamds and what they
 * started) all carry PBS_JOBID=<jobId> in their environment.
 */
export function jobProcesses(jobId: string): JobProcess[] {
  const marker = `\0PBS_JOBID=${jobId}\0`;
  const out: JobProcess[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (/\) [ZX] /.test(stat)) continue;
      const environ = `\0${readFileSync(`/proc/${name}/environ`, 'utf8')}`;
      if (!environ.includes(marker)) continue;
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      out.push({ pid: Number(name), cmdline });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
