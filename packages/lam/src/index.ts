// @ssi/lam: the run-time environment (lamd, OOB messaging, sessions, client library) and the
// base of the boot framework.

export { bindPolicy, oversubscribedBinding } from './binding/bind-param';
export type { BindPlan, BindPolicy } from './binding/bind-plan';
export { BIND_POLICIES, planBinding } from './binding/bind-plan';
export { boundArgv, findTaskset } from './binding/bound-command';
export { formatCpuList, parseCpuList } from './binding/cpu-list';
export type { Binding, BindRequest } from './binding/job-binder';
export { JobBinder } from './binding/job-binder';
export type { NodeCpus } from './binding/node-cpus';
export { allowedCpus, coresOf, heldCpus, readNodeCpus } from './binding/node-cpus';
export type { AlgorithmName, AlgorithmRun } from './boot/algorithms';
export {
  bootableNodes,
  linearAlgorithm,
  linearWindowedAlgorithm,
  runBootAlgorithm,
} from './boot/algorithms';
export type { LauncherSpec } from './boot/allocation';
export { allocatedNode, requireLauncher, verifyAllocation } from './boot/allocation';
export type { BaseActionsOptions } from './boot/base-actions';
export { baseBootActions, growNodes } from './boot/base-actions';
export { BOOT_BASE_PARAMS, registerBootBaseParams } from './boot/base-params';
export type { BootReport, EngineOptions, NodeReport } from './boot/engine';
export {
  bootUniverse,
  ensureNotRunning,
  growUniverse,
  reconUniverse,
  wipeUniverse,
} from './boot/engine';
export { findProgram } from './boot/find-program';
export type { SelectedBoot } from './boot/framework';
export { selectBootModule } from './boot/framework';
export type { InProcessUniverse } from './boot/in-process';
export { bootInProcess } from './boot/in-process';
export type { AgentResult } from './boot/launch';
export { hbootCommand, hbootConfigFor, rteLaunchFor, runAgent, runLocalHboot } from './boot/launch';
export { outputTail } from './boot/output-tail';
export type { LamdInfo, RendezvousOptions } from './boot/rendezvous';
export {
  abandonLamd,
  describeBootNode,
  sendLamdInfo,
  sendUniverse,
  TcpRendezvous,
  universeFromBoot,
} from './boot/rendezvous';
export type { ParsedSchema } from './boot/schema';
export { defaultSchema, parseBootSchema, readBootSchema } from './boot/schema';
export type {
  BootActions,
  BootArgs,
  BootContext,
  BootInitResult,
  BootLocation,
  BootModule,
  BootNode,
  RteLaunch,
  RteOutcome,
  RteProcKind,
  StartOptions,
  StartResult,
} from './boot/types';
export { BOOT_TYPE_API, NOT_NODE_ID } from './boot/types';
export {
  check127Rule,
  checkDistinctAddresses,
  markLocalNode,
  resolveAddresses,
} from './boot/verify';
export type { LamClientOptions, OobMessage, RecvFilter } from './client/lam-client';
export { LamClient } from './client/lam-client';
export { RemoteProcess } from './client/remote-process';
export { refuseResize } from './client/resize-guard';
export type { NodeOutcome } from './client/universe-ops';
export { cleanUniverse, haltUniverse, shrinkUniverse } from './client/universe-ops';
export { withDeadline } from './deadline';
export type { LamFailure } from './errors';
export { isLamError, LamError } from './errors';
export { runHbootInForeground } from './hboot/foreground';
export type { HbootConfig, LamdConfig } from './hboot/hboot-config';
export { encodeHbootConfig, parseHbootConfig } from './hboot/hboot-config';
export type { WipeReport } from './hboot/wipe';
export { wipeSession } from './hboot/wipe';
export type { NodeSpecItem } from './node-spec';
export {
  formatNodeLine,
  isNodeSpec,
  parseNodeId,
  parseNodeSpecWord,
  resolveNodeSpec,
  takeNodeSpec,
  unknownNode,
} from './node-spec';
export {
  lamBin,
  lamPackageDir,
  lamVersion,
  localHbootCommand,
  packageDirOf,
} from './package-paths';
export type { LamParamName } from './params';
export { LAM_PARAMS, lamInt, lamSeconds, registerLamParams } from './params';
export type { JobResourceName, RemoveOptions, RemoveResult } from './session/job-resources';
export {
  JOB_RESOURCE_DIR,
  jobResourcePrefix,
  removeJobResources,
} from './session/job-resources';
export { isProcessAlive, procStartTime } from './session/proc-identity';
export {
  findSessionDir,
  listSessionDirs,
  SESSION_FILES,
  sessionDirFor,
  sessionHost,
  sessionSuffix,
  sessionUser,
} from './session/session-dir';
export type { SessionInfo } from './session/session-info';
export { readSessionInfo } from './session/session-info';
export type { UniverseNode } from './universe';
export { describeNode, isIpv4, nodeLabel, sortNodes } from './universe';
export type { ConnectOptions, ConnectTarget } from './wire/connection';
export { Connection, connectTo, exchange } from './wire/connection';
export type {
  ExitStatus,
  LamdOp,
  LamdOps,
  OpArgs,
  OpResult,
  ProcRecord,
  SpawnRequest,
  Started,
} from './wire/ops';
export { LAMD_OPS } from './wire/ops';
export type { EventKind, OobAddress, WireMessage } from './wire/wire';
export {
  ASSIGNED_PROC_BASE,
  DEFAULT_MAX_FRAME,
  decodePayload,
  encodeFrame,
  FrameDecoder,
  messageProblem,
} from './wire/wire';
