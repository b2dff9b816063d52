import type { CheckpointPhases } from '@ssi/mpi';

/**
 * The checkpoint request protocol between `lamcheckpoint` and mpirun: newline-delimited JSON over
 * mpirun's Unix socket. The client sends one request line, the server streams progress lines and
 * ends with exactly one `done` or `refused` line, then closes.
 */

/**
 * What the client sends: `checkpoint`, or `preempt` (a drain notice: the job is told, checkpointed
 * at once and ended with PREEMPTED_EXIT). An mpirun older than `preempt` refuses it with its
 * EXPECTED_REQUEST, which the client recognizes (`OLD_SERVER_HINT`).
 */
export interface CheckpointRequest {
  op: 'checkpoint' | 'preempt';
}

/**
 * mpirun's exit status after a drain notice whose checkpoint was committed: "checkpointed,
 * restart me" (EX_TEMPFAIL of sysexits.h: a temporary failure, try again later). A drain whose
 * checkpoint failed ends as a plain stop (143, as SIGTERM).
 */
export const PREEMPTED_EXIT = 75;

/**
 * Where the time of a checkpoint went (ms; `CheckpointPhases` of @ssi/mpi): optional on the wire,
 * so that a client and an mpirun of different releases still understand each other.
 */
export type Phases = CheckpointPhases;

/** What mpirun's checkpoint handler reports: a series written, or why none was. */
export type CheckpointOutcome =
  | { ok: true; series: number; ms: number; bytes: number; dir: string; phases?: Phases }
  | { ok: false; reason: string };

export type CheckpointEvent =
  | { event: 'progress'; text: string }
  | {
      event: 'done';
      job: string;
      series: number;
      ms: number;
      bytes: number;
      dir: string;
      phases?: Phases;
    }
  | { event: 'refused'; reason: string };

/** The longest request line the server reads; a request is a few bytes. */
export const MAX_REQUEST_BYTES = 4096;

export const EXPECTED_REQUEST = '{"op":"checkpoint"} or {"op":"preempt"} and a newline';

/** What an mpirun that predates `preempt` says when asked for one (its whole expectation). */
export const OLD_SERVER_HINT = 'expected {"op":"checkpoint"} and a newline';

/** The request in `line`, or why it is not one (for a `refused` answer). */
export function parseRequest(line: string): CheckpointRequest | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { problem: `expected ${EXPECTED_REQUEST}, got ${describe(line)} (not JSON)` };
  }
  const op = (value as { op?: unknown })?.op;
  if (op !== 'checkpoint' && op !== 'preempt') {
    return { problem: `expected ${EXPECTED_REQUEST}, got ${describe(line)}` };
  }
  return { op };
}

/** One event line as the client parses it, or undefined when the line is not one. */
export function parseEvent(line: string): CheckpointEvent | undefined {
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (v?.event === 'progress' && typeof v.text === 'string') return v as CheckpointEvent;
  if (v?.event === 'refused' && typeof v.reason === 'string') return v as CheckpointEvent;
  const numbers = ['series', 'ms', 'bytes'].every((k) => typeof v?.[k] === 'number');
  if (v?.event === 'done' && numbers && typeof v.dir === 'string' && typeof v.job === 'string') {
    if (v.phases !== undefined && !isPhases(v.phases)) return undefined;
    return v as CheckpointEvent;
  }
  return undefined;
}

export function eventLine(e: CheckpointEvent): string {
  return `${JSON.stringify(e)}\n`;
}

function describe(line: string): string {
  return JSON.stringify(line.length > 80 ? `${line.slice(0, 80)}…` : line);
}

const PHASE_KEYS = [
  'prepareMs',
  'savedMs',
  'drainMs',
  'saveMs',
  'drainSaveMs',
  'commitMs',
] as const;

/** An object with every phase as a finite number (a `done` line's optional `phases`). */
export function isPhases(x: unknown): x is Phases {
  return (
    typeof x === 'object' &&
    x !== null &&
    PHASE_KEYS.every((k) => Number.isFinite((x as Record<string, unknown>)[k]))
  );
}

/** One line for `lamcheckpoint -v`: the phases in the order they happen. */
export function formatPhases(p: Phases): string {
  const f = (x: number) => x.toFixed(1);
  return (
    `phases: prepare ${f(p.prepareMs)} ms, drain+save ${f(p.savedMs)} ms ` +
    `(slowest rank: drain ${f(p.drainMs)} + save ${f(p.saveMs)}, together ${f(p.drainSaveMs)}), ` +
    `commit ${f(p.commitMs)} ms`
  );
}
