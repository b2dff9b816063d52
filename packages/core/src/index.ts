export type { ProcessSelection } from './agreement';
export { checkAgreement } from './agreement';
export type { SsiContext, SsiContextOptions } from './context';
export { createSsiContext, registerBaseParams } from './context';
export type {
  Discovery,
  DiscoveryOptions,
  DiscoveryProblem,
  ModuleOrigin,
  ModuleRecord,
} from './discovery';
export { discoverModules, modulePathFrom } from './discovery';
export type { SsiErrorCode } from './errors';
export { isSsiError, SsiError } from './errors';
export type { FrameworkOptions } from './framework';
export { Framework } from './framework';
export type { FrameworkType } from './frameworks';
export {
  FRAMEWORKS,
  frameworkApi,
  isFrameworkType,
  SELECTOR_PARAMS,
  SSI_API_VERSION,
} from './frameworks';
export type { OpenedModule } from './loader';
export {
  closeModule,
  DEFAULT_PRIORITY,
  loadModule,
  openModule,
  registerModuleParams,
} from './loader';
export type { ManifestEntry, PackageManifest } from './manifest';
export { parseManifest, readPackageManifest } from './manifest';
export type { OpenContext, OpenResult, SsiModule } from './module';
export { defineModule } from './module';
export type { ParamFile } from './param-file';
export { defaultParamFilePath, loadParamFile, readParamFile } from './param-file';
export type {
  ParamLookup,
  ParamSource,
  ParamSourcesInit,
  ParamSpec,
  ParamType,
  ParamValue,
} from './params';
export { ENV_PREFIX, ParamRegistry } from './params';
export type { Requirement } from './requirements';
export { formatRequirement, parseRequirements, unmetRequirement } from './requirements';
export type {
  Candidate,
  QueryAnswer,
  Ranked,
  Selection,
  SelectOptions,
  SelectorRequest,
} from './selection';
export { allows, parseSelector, selectModule } from './selection';
export type { SsiArgs } from './ssi-args';
export { parseSsiArgs } from './ssi-args';
export { closestName } from './suggest';
export type { VerboseStream } from './verbose';
export {
  createVerboseStream,
  registerVerboseParams,
  VERBOSE_DEBUG,
  VERBOSE_MINIMAL,
  VERBOSE_SILENT,
} from './verbose';
export type { Version } from './version';
export { formatVersion, isApiCompatible, parseVersion, sameModuleVersion } from './version';
