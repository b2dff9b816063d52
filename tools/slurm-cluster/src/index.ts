export { slurmAvailable } from './available';
export type {
  CommandResult,
  SbatchOptions,
  SlurmCluster,
  SlurmJob,
  SlurmStep,
  StartSlurmClusterOptions,
} from './cluster';
export { startSlurmCluster } from './cluster';
export type { SlurmClusterFailure } from './errors';
export { SlurmClusterError } from './errors';
export { markedProcesses } from './procs';
export type { KillStrayReport } from './strays';
export { killStraySlurmClusters } from './strays';
