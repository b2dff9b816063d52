import type { ExitStatus, ProcRecord, SpawnRequest, Started } from '../lamd/process-table';
import type { UniverseNode } from '../universe';

/** The requests a lamd answers: name → [arguments, result]. Shared by lamd and client. */
export interface LamdOps {
  /** is the lamd there and in its main loop? (tping) */
  ping: [null, { node: number; name: string; pid: number; procs: number }];
  /** the universe as this lamd knows it (lamnodes) */
  universe: [null, UniverseNode[]];
  /** start a process; its output and exit go to `io` (default: the requester) */
  spawn: [SpawnRequest & { io?: { node: number; proc: number } }, Started];
  /** deliver a signal to a process this lamd started (its whole process group) */
  signal: [{ pid: number; signal: string }, null];
  /** the processes this lamd started and that still run */
  procs: [null, ProcRecord[]];
  /** lamclean: stop every started process, drop undelivered messages */
  clean: [null, { killed: number; messages: number }];
  /** lamhalt: stop everything and exit */
  halt: [null, null];
  /** lamgrow / lamshrink: one node joins or leaves (leaving yourself means halting) */
  'universe-update': [{ add?: UniverseNode; remove?: number }, null];
}

export type LamdOp = keyof LamdOps;
export type OpArgs<K extends LamdOp> = LamdOps[K][0];
export type OpResult<K extends LamdOp> = LamdOps[K][1];

export const LAMD_OPS: readonly LamdOp[] = [
  'ping',
  'universe',
  'spawn',
  'signal',
  'procs',
  'clean',
  'halt',
  'universe-update',
];

export type { ExitStatus, ProcRecord, SpawnRequest, Started };
