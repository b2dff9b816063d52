export type { BenchCommand, Column, Stat } from './harness';
export {
  environment,
  formatSize,
  formatTable,
  median,
  nowNs,
  Options,
  parseSize,
  repeat,
  resultsDir,
  stat,
  writeResults,
} from './harness';
