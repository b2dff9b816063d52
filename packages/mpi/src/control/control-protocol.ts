/**
 * The messages of the job control channel between `mpirun` (the job hub) and every rank: typed,
 * namespaced (`cr.checkpoint`, `tool.progress`), with msgpackr-encodable payloads. The channel
 * rides on whatever carries the hub conversation (OOB through the lamds under mpirun, the
 * rendezvous socket under the test launcher); these shapes are the same on both.
 */

/** rank → hub. `ask` set: the sender waits for a `ControlDown` with `replyTo` = `ask`. */
export interface ControlUp {
  rank: number;
  type: string;
  payload: unknown;
  ask?: number;
}

/** hub → rank: a message, or the answer to an ask (`replyTo`; `error` when it failed). */
export interface ControlDown {
  type: string;
  payload: unknown;
  replyTo?: number;
  error?: string;
}

/** `namespace.name`, each part letters, digits, `_` or `-`, starting with a letter. */
const TYPE_RULE = /^[A-Za-z][\w-]*(\.[A-Za-z][\w-]*)+$/;

/** Why `type` is not a control message type, or undefined when it is one. */
export function badControlType(type: unknown): string | undefined {
  if (typeof type !== 'string') return `type ${String(type)} is not a string`;
  if (!TYPE_RULE.test(type) || type.length > 200) {
    return `type "${type.slice(0, 200)}" is not a namespaced name like "cr.checkpoint" or "tool.progress"`;
  }
  return undefined;
}

/** Throws a clear error for a bad type given by local code (bad input of a caller). */
export function checkControlType(type: unknown, call: string): string {
  const why = badControlType(type);
  if (why) throw new TypeError(`${call}: ${why}`);
  return type as string;
}

const isAskId = (v: unknown): v is number => Number.isInteger(v) && (v as number) > 0;

/** Reads a rank's message from the wire; throws why it is malformed. */
export function parseControlUp(data: unknown, size: number): ControlUp {
  if (!data || typeof data !== 'object')
    throw new Error(`control message ${String(data)} is not an object`);
  const m = data as Partial<ControlUp>;
  const rank = m.rank;
  if (!Number.isInteger(rank) || (rank as number) < 0 || (rank as number) >= size) {
    throw new Error(`control message with an invalid rank ${String(rank)} (job size ${size})`);
  }
  const why = badControlType(m.type);
  if (why) throw new Error(`control message from rank ${rank}: ${why}`);
  if (m.ask !== undefined && !isAskId(m.ask)) {
    throw new Error(
      `control message "${m.type}" from rank ${rank}: ask id ${String(m.ask)} is not a positive integer`,
    );
  }
  return { rank: rank as number, type: m.type as string, payload: m.payload, ask: m.ask };
}

/** Reads a hub message from the wire; throws why it is malformed. */
export function parseControlDown(data: unknown): ControlDown {
  if (!data || typeof data !== 'object')
    throw new Error(`control message ${String(data)} is not an object`);
  const m = data as Partial<ControlDown>;
  if (m.replyTo !== undefined) {
    if (!isAskId(m.replyTo))
      throw new Error(`control reply to ask ${String(m.replyTo)}: not an ask id`);
    if (m.error !== undefined && typeof m.error !== 'string') {
      throw new Error(
        `control reply to ask ${m.replyTo}: error ${String(m.error)} is not a string`,
      );
    }
  } else {
    const why = badControlType(m.type);
    if (why) throw new Error(`control message from mpirun: ${why}`);
  }
  return { type: String(m.type), payload: m.payload, replyTo: m.replyTo, error: m.error };
}
