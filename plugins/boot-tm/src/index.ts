export type { PbsNode } from './nodefile';
export { parseNodeFile, readNodeFile } from './nodefile';
export type { PbsJob } from './pbs-env';
export { pbsJob } from './pbs-env';
export { default, TM_NO_RESIZE } from './tm-module';
