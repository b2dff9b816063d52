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
export type { Bar, BarChartSpec, LineChartSpec, Panel, Series } from './svg-chart';
export { barChart, lineChart, svgDocument, writeChartBeside } from './svg-chart';
