export { shmUnavailableReason } from './availability';
export type { CleanOptions, CleanResult } from './cleanup';
export { cleanStaleSegments } from './cleanup';
export type { CrossMemory } from './cross-memory';
export { crossMemory, crossMemoryUnavailableReason } from './cross-memory';
export { ShmEndpoint } from './endpoint';
export type { EndpointOptions, RecvOptions } from './endpoint-options';
export type { ShmFailure } from './errors';
export { isShmError, ShmError } from './errors';
export type { FutexMemory, WaitOptions, WaitResult } from './futex';
export { waitWord, waitWordSync, wakeWord } from './futex';
export type { Layout, LayoutParams } from './layout';
export {
  computeLayout,
  DEFAULT_POOL_BLOCK,
  DEFAULT_POOL_SIZE,
  DEFAULT_SHORT_LIMIT,
  LAYOUT_VERSION,
} from './layout';
export { isProcessAlive } from './liveness';
export type { LockOptions } from './lock';
export { PoolLock } from './lock';
export type { NameParts } from './names';
export { segmentName, sessionHash, sessionPrefix } from './names';
export type { BufferKind } from './native';
export { SharedPool } from './pool';
export type { Message } from './receives';
export { ANY } from './receives';
export { SpscRing } from './ring';
export type { AttachOptions, CreateOptions, LockKind, SegmentNaming } from './segment';
export { ShmSegment } from './segment';
