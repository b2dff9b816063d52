export { testbedAvailable, which } from './available';
export type { TestbedFailure } from './errors';
export { TestbedError } from './errors';
export { disown, own } from './exit-hooks';
export type { KillStrayOptions, KillStrayReport } from './strays';
export { killStrayTestbeds } from './strays';
export type { HostStatus, TestbedStatus } from './testbed';
export { attachTestbed, startTestbed, testbedStatus } from './testbed';
export type {
  BootSchemaOptions,
  SshOptions,
  SshResult,
  StartTestbedOptions,
  Testbed,
  TestHost,
} from './types';
