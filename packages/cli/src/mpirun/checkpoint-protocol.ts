/**
 * The checkpoint request protocol between `lamcheckpoint` and mpirun: newline-delimited JSON over
 * mpirun's Unix socket. The client sends one request line, the server streams progress lines and
 * ends with exactly one `done` or `refused` line, then closes.
 */

/** What the client sends. */
export interface CheckpointRequest {
  op: 'checkpoint';
}

/** What mpirun's checkpoint handler reports: a series written, or why none was. */
export type CheckpointOutcome =
  | { ok: true; series: number; ms: number; bytes: number; dir: string }
  | { ok: false; reason: string };

export type CheckpointEvent =
  | { event: 'progress'; text: string }
  | { event: 'done'; job: string; series: number; ms: number; bytes: number; dir: string }
  | { event: 'refused'; reason: string };

/** The longest request line the server reads; a request is a few bytes. */
export const MAX_REQUEST_BYTES = 4096;

export const EXPECTED_REQUEST = '{"op":"checkpoint"} and a newline';

/** The request in `line`, or why it is not one (for a `refused` answer). */
export function parseRequest(line: string): CheckpointRequest | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { problem: `expected ${EXPECTED_REQUEST}, got ${describe(line)} (not JSON)` };
  }
  if ((value as { op?: unknown })?.op !== 'checkpoint') {
    return { problem: `expected ${EXPECTED_REQUEST}, got ${describe(line)}` };
  }
  return { op: 'checkpoint' };
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
