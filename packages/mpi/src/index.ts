/**
 * @ssi/mpi: the MPI layer of SSI for Node. Application programs use `MPI` (init, the
 * communicators, requests, statuses, constants); rpi module authors use the framework interface
 * and the rpi base helpers exported below.
 */
import { Keyval } from './attributes';
import { IN_PLACE } from './coll/arguments';
import { BUILTIN_OPS, createOp } from './coll/ops';
import { Communicator } from './comm';
import {
  ANY_SOURCE,
  ANY_TAG,
  BSEND_OVERHEAD,
  CONGRUENT,
  IDENT,
  PROC_NULL,
  ROOT,
  SIMILAR,
  THREAD_FUNNELED,
  THREAD_MULTIPLE,
  THREAD_SERIALIZED,
  THREAD_SINGLE,
  UNDEFINED,
  UNEQUAL,
} from './constants';
import { DataKind } from './data';
import { Datatype, ORDER_C, ORDER_FORTRAN } from './datatype/datatype';
import { pack, packSize, unpack } from './datatype/pack-api';
import { PREDEFINED_TYPES } from './datatype/predefined';
import { ERRORS_ARE_FATAL, ERRORS_RETURN, Errhandler } from './errhandler';
import { ErrorClass, MpiError } from './errors';
import { Group } from './group';
import type { InitOptions } from './mpi';
import { Mpi } from './mpi';
import { PersistentRequest, Request } from './request';
import { Status } from './status';
import { dimsCreate } from './topology/dims';
import { wtick, wtime } from './wtime';

/** The MPI API in one namespace, mpi4py-style: `const mpi = await MPI.init()`. */
export const MPI = {
  /** Initializes MPI (`MPI_Init_thread`); resolves with the `Mpi` instance. */
  init: (options?: InitOptions): Promise<Mpi> => Mpi.init(options),
  /** `MPI_Initialized`. */
  initialized: (): boolean => Mpi.initialized(),
  /** `MPI_Finalized`. */
  finalized: (): boolean => Mpi.finalized(),
  wtime,
  wtick,
  ANY_SOURCE,
  ANY_TAG,
  PROC_NULL,
  ROOT,
  UNDEFINED,
  IN_PLACE,
  IDENT,
  CONGRUENT,
  SIMILAR,
  UNEQUAL,
  BSEND_OVERHEAD,
  ...BUILTIN_OPS,
  createOp,
  THREAD_SINGLE,
  THREAD_FUNNELED,
  THREAD_SERIALIZED,
  THREAD_MULTIPLE,
  ERRORS_ARE_FATAL,
  ERRORS_RETURN,
  Errhandler,
  ErrorClass,
  MpiError,
  Request,
  PersistentRequest,
  Status,
  Communicator,
  Group,
  Keyval,
  DataKind,
  Datatype,
  ...PREDEFINED_TYPES,
  ORDER_C,
  ORDER_FORTRAN,
  pack,
  unpack,
  packSize,
  dimsCreate,
} as const;

/** For modules: bounds a wait (the run-time environment's helper, one copy in the system). */
export { withDeadline } from '@ssi/lam';
export { Keyval } from './attributes';
export type { InPlace } from './coll/arguments';
export { IN_PLACE } from './coll/arguments';
export { copyOfArray, similarArray } from './coll/arrays';
export { BASE_TAG } from './coll/base-exchange';
export type { CollChannel, CollComm, CollRequest, CollUserCalls } from './coll/coll-comm';
export type { CommColl } from './coll/framework';
export { COLL_BASE_PARAMS, CollFramework, FALLBACK_MODULE } from './coll/framework';
export type { CollLocality } from './coll/locality';
export type { ReduceOp } from './coll/ops';
export {
  BAND,
  BOR,
  BUILTIN_OPS,
  BXOR,
  createOp,
  LAND,
  LOR,
  LXOR,
  MAX,
  MAXLOC,
  MIN,
  MINLOC,
  PROD,
  SUM,
} from './coll/ops';
export type {
  CollActions,
  CollContext,
  CollFunction,
  CollModule,
  CollQueryAnswer,
  NumericArray,
  VLayout,
} from './coll/types';
export { COLL_API_VERSION } from './coll/types';
export type { CommHost } from './comm';
export { Communicator } from './comm';
export type { Comparison, ThreadLevel } from './constants';
export {
  ANY_SOURCE,
  ANY_TAG,
  BSEND_OVERHEAD,
  CID_SELF,
  CID_WORLD,
  CONGRUENT,
  DEFAULT_MAX_CID,
  DEFAULT_MAX_TAG,
  IDENT,
  PROC_NULL,
  ROOT,
  SIMILAR,
  THREAD_FUNNELED,
  THREAD_MULTIPLE,
  THREAD_SERIALIZED,
  THREAD_SINGLE,
  UNDEFINED,
  UNEQUAL,
} from './constants';
export type { ControlDown, ControlUp } from './control/control-protocol';
export { badControlType, parseControlDown, parseControlUp } from './control/control-protocol';
export type { HubControlHandler } from './control/hub-control';
export { HubControl } from './control/hub-control';
export type { ControlHandler, JobControl } from './control/rank-control';
export { RankControl } from './control/rank-control';
export type { KeptMessage, MpiImage, RestartSummary } from './cr/image';
export { decodeImage, encodeImage } from './cr/image';
export type { Progress } from './cr/job-checkpoints';
export { JobCheckpoints } from './cr/job-checkpoints';
export type { HandlerState } from './cr/rank-checkpoints';
export type {
  CompleteSeries,
  IgnoredEntry,
  LostFile,
  ParitySetRecord,
  RankChannel,
  RankFile,
  RankFileMeta,
  RankFileRecord,
  RankFileSection,
  RankFileWriter,
  RedundancyRecord,
  RepairOutcome,
  SavedRankFile,
  SeriesManifest,
  SeriesStatus,
  StoragePlan,
  StoragePlanName,
  StoragePlanSettings,
  WrittenRankFile,
} from './cr/store';
export {
  CheckpointFileError,
  CheckpointStore,
  CheckpointStoreError,
  chooseRestartSeries,
  continuesBeforeCommit,
  MANIFEST_FORMAT,
  PARITY_CHUNK_BYTES,
  paritySets,
  protectAfterContinue,
  protectInCheckpoint,
  pruneRedundancy,
  RANK_FILE_MAGIC,
  RANK_FILE_VERSION,
  rankRecordOf,
  reduceParity,
  redundancyOfSeries,
  repairSeries,
  STORAGE_PLANS,
  storagePlanOf,
} from './cr/store';
export type {
  CheckpointPoint,
  CheckpointSection,
  CheckpointWork,
  CrlamActions,
  CrlamModule,
  CrmpiActions,
  CrmpiModule,
  JobRecord,
  RestoredRank,
  SavedRank,
  SeriesPlan,
  SeriesResult,
} from './cr/types';
export { CR_RESTART_ENV, CRLAM_API_VERSION, CRMPI_API_VERSION, CrMessage } from './cr/types';
export type {
  CheckpointOutcome,
  CheckpointPhases,
  CheckpointReader,
  CheckpointWriter,
} from './cr/user-api';
export { CheckpointApi } from './cr/user-api';
export type { BufferLike, DataKindValue } from './data';
export {
  allocMessage,
  bytesOf,
  DataKind,
  decodeValue,
  elementSize,
  encodeValue,
  kindName,
  kindOf,
} from './data';
export type { ArrayOrder } from './datatype/datatype';
export { Datatype, ORDER_C, ORDER_FORTRAN } from './datatype/datatype';
export { pack, packSize, unpack } from './datatype/pack-api';
export {
  BIGINT64,
  BIGUINT64,
  BYTE,
  FLOAT32,
  FLOAT64,
  INT8,
  INT16,
  INT32,
  PACKED,
  UINT8,
  UINT16,
  UINT32,
} from './datatype/predefined';
export type { TypedMessage } from './datatype/typed-message';
export type { DiscoveryHandoverUse } from './discovery-handover';
export {
  DISCOVERY_HANDOVER_ENV,
  describeHandoverUse,
  discoveryHandoverEnv,
  readDiscoveryHandover,
} from './discovery-handover';
export { shareInstallationWithDropIns } from './drop-in-peers';
export { ERRORS_ARE_FATAL, ERRORS_RETURN, Errhandler } from './errhandler';
export type { ErrorClassName, ErrorClassValue } from './errors';
export { ErrorClass, errorClassName, isMpiError, MpiError } from './errors';
export { EntryGate } from './gate';
export type { RankRange } from './group';
export { Group } from './group';
export type {
  Gps,
  JobAdoption,
  JobContact,
  JobRuntime,
  ModuleChoice,
  ProcessInfo,
  ProcLocation,
} from './job-runtime';
export { JOB_ENV, OOB_TAG_USER_BASE, OobTag } from './job-runtime';
export {
  DEFERRED_CA_CERTS_ENV,
  deferredCaCertsEnv,
  NODE_CA_CERTS_ENV,
  restoreDeferredCaCerts,
} from './launch/deferred-ca-certs';
export type { AbortMsg } from './launch/hub-protocol';
export { formatAddress, HUB_ENV, HubTag } from './launch/hub-protocol';
export { jobContactOf } from './launch/job-contact';
export type { HubEvents } from './launch/job-hub';
export { JobHub } from './launch/job-hub';
export { deliverBytes } from './matching/delivery';
export type { MessageFields } from './matching/header';
export { MessageHeader } from './matching/header';
export { UnexpectedMessage } from './matching/unexpected';
export type { InitOptions } from './mpi';
export { Mpi } from './mpi';
export { MPI_BASE_PARAMS, registerMpiParams } from './params';
export { compareGps, Proc, ProcMode, sortProcs } from './proc';
export { rebuildProcessList } from './process-list';
export type { RequestOp } from './request';
export { PersistentRequest, Request } from './request';
export type { Envelope } from './rpi/envelope';
export {
  ENVELOPE_BYTES,
  Env,
  EnvFlag,
  KIND_SHIFT,
  PROTOCOL_MASK,
  readEnvelope,
  WireEnvelope,
  writeEnvelope,
} from './rpi/envelope';
export type { FastRecvResult } from './rpi/fast-recv';
export { FastRecv } from './rpi/fast-recv';
export type { RpiChoice } from './rpi/framework';
export { RpiFramework } from './rpi/framework';
export type { ReqStateValue, ReqTypeValue } from './rpi/request';
export { ReqFlag, ReqMark, ReqState, ReqType, RpiRequest } from './rpi/request';
export type {
  RecvScatter,
  RpiActions,
  RpiGather,
  RpiHost,
  RpiLimits,
  RpiModule,
  RpiQueryAnswer,
  RpiQueryContext,
  RpiRuntime,
  RpiScatter,
} from './rpi/types';
export { RPI_API_VERSION } from './rpi/types';
export { runtimeFromEnvironment } from './runtime-from-env';
export { Status } from './status';
export { CartTopology } from './topology/cart';
export { dimsCreate } from './topology/dims';
export { DistGraphTopology, GraphTopology } from './topology/graph';
export type { Topology } from './topology/topology';
export { wtick, wtime } from './wtime';
