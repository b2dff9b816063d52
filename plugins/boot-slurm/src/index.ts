export { countsForNodes, expandCounts } from './counts';
export { expandHostlist, MAX_HOSTS } from './hostlist';
export type { SlurmJob } from './slurm-env';
export { slurmJob } from './slurm-env';
export { default, SLURM_NO_RESIZE } from './slurm-module';
