/** @ssi/cr-external: the external checkpoint/restart component (crlam and crmpi halves). */

export type { BackendCommands, BackendName } from './backends';
export { BACKENDS, criuCommands, criuUnavailable, RESTORED_MARKER } from './backends';
export { default as crlamExternal } from './crlam';
export { default as crmpiExternal } from './crmpi';
export type { CommandResult } from './detached-command';
export { runDetached } from './detached-command';
export type { CheckpointerHooks, FreezeHandler, FrozenProcess, Verdict } from './hooks';
export { checkpointerHooks } from './hooks';
export { CRLAM_EXTERNAL_PARAMS, CRMPI_EXTERNAL_PARAMS } from './params';
export type { ProcessPlace } from './placeholders';
export { fillCommand, PLACEHOLDERS, shellQuote } from './placeholders';
export type { ExternalRecord } from './record';
export { decodeRecord, EXTERNAL_SECTION } from './record';
