/** The checkpoint store: what cr modules, mpirun and the commands use of it. */
export type { CompleteSeries, IgnoredEntry, RankFileWriter } from './checkpoint-store';
export { CheckpointStore } from './checkpoint-store';
export type { ParitySetRecord, RankFileRecord, RedundancyRecord, SeriesManifest } from './manifest';
export { MANIFEST_FORMAT } from './manifest';
export type { RankChannel } from './parity-reduction';
export { PARITY_CHUNK_BYTES, reduceParity } from './parity-reduction';
export type { SavedRankFile } from './plan-in-mpirun';
export {
  continuesBeforeCommit,
  pruneRedundancy,
  rankRecordOf,
  redundancyOfSeries,
} from './plan-in-mpirun';
export type { WrittenRankFile } from './plan-in-rank';
export { protectAfterContinue, protectInCheckpoint } from './plan-in-rank';
export type { RankFile, RankFileMeta, RankFileSection } from './rank-file-format';
export { RANK_FILE_MAGIC, RANK_FILE_VERSION } from './rank-file-format';
export { chooseRestartSeries } from './restart-choice';
export type { SeriesStatus } from './series-check';
export type { LostFile, RepairOutcome } from './series-repair';
export { repairSeries } from './series-repair';
export type { StoragePlan, StoragePlanName, StoragePlanSettings } from './storage-plan';
export { paritySets, STORAGE_PLANS, storagePlanOf } from './storage-plan';
export { CheckpointFileError, CheckpointStoreError } from './store-errors';
