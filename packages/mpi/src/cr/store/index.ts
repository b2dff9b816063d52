/** The checkpoint store: what cr modules, mpirun and the commands use of it. */
export type { CompleteSeries, IgnoredEntry, RankFileWriter } from './checkpoint-store';
export { CheckpointStore } from './checkpoint-store';
export type { RankFileRecord, SeriesManifest } from './manifest';
export { MANIFEST_FORMAT } from './manifest';
export type { RankFile, RankFileMeta, RankFileSection } from './rank-file-format';
export { RANK_FILE_MAGIC, RANK_FILE_VERSION } from './rank-file-format';
export type { SeriesStatus } from './series-check';
export { CheckpointFileError, CheckpointStoreError } from './store-errors';
