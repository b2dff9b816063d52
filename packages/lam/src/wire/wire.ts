/**
 * The lamd wire protocol, all of it: the authentication handshake, the frames, and the control
 * messages they carry.
 *
 * Handshake (raw bytes, before any frame is parsed). The accepting side speaks first:
 *   server → client  "SSI\x01" + nonceS(32)
 *   client → server  "SSI\x01" + nonceC(32) + HMAC-SHA256(secret, "ssi-client" nonceS nonceC)
 *   server → client  HMAC-SHA256(secret, "ssi-server" nonceC nonceS)
 * A server that cannot verify the client drops the connection; a client that cannot verify the
 * server does the same, so neither side talks to anyone outside the universe.
 *
 * Frames: a 4-byte big-endian payload length, then a msgpack-encoded message. Lengths of 0 or
 * above the maximum frame size, undecodable payloads and messages of unknown shape are protocol
 * errors: the decoder reports them and the connection is closed; nothing is thrown.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
// msgpackr/pack is msgpackr's pure-JS build (Packr and Unpackr): its main Node entry loads a
// native string extractor through detect-libc and node:stream, ~20 ms of CPU and 20-40 ms of
// wall time in every process at start-up for no gain on these small messages (issue 19).
import { Packr, Unpackr } from 'msgpackr/pack';
import { LamError } from '../errors';
import { isInt, MAX_NODE_ID, type UniverseNode, universeNodeProblem } from '../universe';

// ---------------------------------------------------------------- handshake

export const MAGIC = Buffer.from([0x53, 0x53, 0x49, 0x01]); // "SSI" + protocol version 1
export const NONCE_BYTES = 32;
const MAC_BYTES = 32;
export const CHALLENGE_BYTES = MAGIC.length + NONCE_BYTES;
export const PROOF_BYTES = MAGIC.length + NONCE_BYTES + MAC_BYTES;
export const SERVER_PROOF_BYTES = MAC_BYTES;

function mac(secret: Buffer, label: string, a: Buffer, b: Buffer): Buffer {
  return createHmac('sha256', secret).update(label).update(a).update(b).digest();
}

export function makeChallenge(): { bytes: Buffer; nonce: Buffer } {
  const nonce = randomBytes(NONCE_BYTES);
  return { bytes: Buffer.concat([MAGIC, nonce]), nonce };
}

/** The server's nonce from its challenge, or undefined when it is not our protocol. */
export function readChallenge(bytes: Buffer): Buffer | undefined {
  if (bytes.length !== CHALLENGE_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) {
    return undefined;
  }
  return bytes.subarray(MAGIC.length);
}

export function makeProof(secret: Buffer, nonceS: Buffer): { bytes: Buffer; nonceC: Buffer } {
  const nonceC = randomBytes(NONCE_BYTES);
  const proof = mac(secret, 'ssi-client', nonceS, nonceC);
  return { bytes: Buffer.concat([MAGIC, nonceC, proof]), nonceC };
}

/** Verifies a client's proof; returns its nonce when it knows the secret. */
export function checkProof(secret: Buffer, nonceS: Buffer, bytes: Buffer): Buffer | undefined {
  if (bytes.length !== PROOF_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) {
    return undefined;
  }
  const nonceC = bytes.subarray(MAGIC.length, MAGIC.length + NONCE_BYTES);
  const expected = mac(secret, 'ssi-client', nonceS, nonceC);
  return timingSafeEqual(expected, bytes.subarray(MAGIC.length + NONCE_BYTES)) ? nonceC : undefined;
}

export function makeServerProof(secret: Buffer, nonceS: Buffer, nonceC: Buffer): Buffer {
  return mac(secret, 'ssi-server', nonceC, nonceS);
}

export function checkServerProof(
  secret: Buffer,
  nonceS: Buffer,
  nonceC: Buffer,
  bytes: Buffer,
): boolean {
  return (
    bytes.length === MAC_BYTES && timingSafeEqual(makeServerProof(secret, nonceS, nonceC), bytes)
  );
}

// ---------------------------------------------------------------- messages

/** Where an OOB message goes: a node and a process on it (proc 0 is the lamd itself). */
export interface OobAddress {
  node: number;
  proc: number;
}

/** Process ids the lamd hands out to clients that do not ask for one (above any Linux pid). */
export const ASSIGNED_PROC_BASE = 2 ** 22 + 1;
const MAX_PROC = 2 ** 31 - 1;
const MAX_TAG = 2 ** 31 - 1;

export type EventKind = 'io' | 'exit' | 'node-lost';

export type WireMessage =
  /** client → its lamd: attach as process `proc` (null: let the lamd choose one) */
  | { t: 'hello'; proc: number | null; pid: number; name: string }
  | { t: 'welcome'; node: number; proc: number }
  /** lamd → lamd: this outgoing link comes from node `node` */
  | { t: 'peer'; node: number }
  /** a request to the lamd of `node`, answered by a `res` to `src` */
  | { t: 'req'; id: number; src: OobAddress; node: number; op: string; args: unknown }
  | {
      t: 'res';
      id: number;
      dst: OobAddress;
      ok: boolean;
      value?: unknown;
      error?: string;
      failure?: string;
    }
  /** an out-of-band message; the destination lamd answers `res` with the same id to `src` */
  | { t: 'oob'; id: number; src: OobAddress; dst: OobAddress; tag: number; data: unknown }
  /** something that happened, for one process: output, an exit, a lost node */
  | { t: 'ev'; dst: OobAddress; ev: EventKind; body: unknown }
  /** boot rendezvous: a new lamd tells lamboot where it listens */
  | {
      t: 'lamd-info';
      node: number | null;
      name: string;
      address: string;
      port: number;
      pid: number;
    }
  /** boot rendezvous: lamboot tells a new lamd the whole universe */
  | { t: 'universe-init'; nodes: UniverseNode[]; me: number }
  | { t: 'ack' }
  | { t: 'nak'; error: string };

export type MessageType = WireMessage['t'];

/** Why `value` is not a valid message, or undefined when it is one. */
export function messageProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return 'a message must be a map';
  }
  const m = value as Record<string, unknown>;
  const check = CHECKS[m.t as MessageType];
  if (typeof m.t !== 'string' || !check) return `unknown message type ${JSON.stringify(m.t)}`;
  const problem = check(m);
  return problem ? `${m.t}: ${problem}` : undefined;
}

type Check = (m: Record<string, unknown>) => string | undefined;

const isAddress = (a: unknown): boolean => {
  if (a === null || typeof a !== 'object') return false;
  const x = a as Record<string, unknown>;
  return isInt(x.node, 0, MAX_NODE_ID) && isInt(x.proc, 0, MAX_PROC);
};
const isId = (x: unknown) => isInt(x, 0, Number.MAX_SAFE_INTEGER);
const isShortString = (x: unknown, max = 256) => typeof x === 'string' && x.length <= max;

const CHECKS: Record<MessageType, Check> = {
  hello: (m) =>
    (m.proc === null || isInt(m.proc, 1, ASSIGNED_PROC_BASE - 1)) &&
    isInt(m.pid, 0, MAX_PROC) &&
    isShortString(m.name)
      ? undefined
      : 'needs proc (1..2^22 or null), pid and name',
  welcome: (m) =>
    isInt(m.node, 0, MAX_NODE_ID) && isInt(m.proc, 1, MAX_PROC) ? undefined : 'bad node or proc',
  peer: (m) => (isInt(m.node, 0, MAX_NODE_ID) ? undefined : 'bad node'),
  req: (m) =>
    isId(m.id) && isAddress(m.src) && isInt(m.node, 0, MAX_NODE_ID) && isShortString(m.op, 64)
      ? undefined
      : 'needs id, src, node and op',
  res: (m) =>
    isId(m.id) &&
    isAddress(m.dst) &&
    typeof m.ok === 'boolean' &&
    (m.ok || isShortString(m.error, 64 * 1024)) &&
    (m.failure === undefined || isShortString(m.failure, 64))
      ? undefined
      : 'needs id, dst, ok (and error when not ok)',
  oob: (m) =>
    isId(m.id) && isAddress(m.src) && isAddress(m.dst) && isInt(m.tag, -MAX_TAG - 1, MAX_TAG)
      ? undefined
      : 'needs id, src, dst and an int32 tag',
  ev: (m) =>
    isAddress(m.dst) && (m.ev === 'io' || m.ev === 'exit' || m.ev === 'node-lost')
      ? undefined
      : 'needs dst and ev (io, exit, node-lost)',
  'lamd-info': (m) =>
    (m.node === null || isInt(m.node, 0, MAX_NODE_ID)) &&
    isShortString(m.name) &&
    isShortString(m.address, 64) &&
    isInt(m.port, 1, 65535) &&
    isInt(m.pid, 1, MAX_PROC)
      ? undefined
      : 'needs node, name, address, port and pid',
  'universe-init': (m) => {
    if (!Array.isArray(m.nodes) || m.nodes.length === 0 || m.nodes.length > 100_000) {
      return 'needs a non-empty node list';
    }
    for (const n of m.nodes) {
      const p = universeNodeProblem(n);
      if (p) return `node entry: ${p}`;
    }
    return m.nodes.some((n: UniverseNode) => n.id === m.me) ? undefined : 'me is not in nodes';
  },
  ack: () => undefined,
  nak: (m) => (isShortString(m.error, 64 * 1024) ? undefined : 'needs error'),
};

// ---------------------------------------------------------------- frames

export const FRAME_HEADER_BYTES = 4;
export const DEFAULT_MAX_FRAME = 64 * 1024 * 1024;

// Plain maps only: no records, so a peer cannot make the decoder keep state between frames.
const packr = new Packr({ useRecords: false, moreTypes: false });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, moreTypes: false });

export function encodeFrame(message: WireMessage, maxFrame = DEFAULT_MAX_FRAME): Buffer {
  const payload = packr.pack(message);
  if (payload.length > maxFrame) {
    throw new LamError(
      'BAD_ARGS',
      `a ${message.t} message of ${payload.length} bytes exceeds the maximum frame size of ${maxFrame} bytes (lam_max_frame); send less data per message`,
    );
  }
  const header = Buffer.alloc(FRAME_HEADER_BYTES);
  header.writeUInt32BE(payload.length, 0);
  return Buffer.concat([header, payload]);
}

/**
 * Cuts a byte stream into messages. `push` never throws: a malformed frame ends the stream with
 * `error` set, after which the decoder accepts nothing more (the caller closes the connection).
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private failed: string | undefined;

  constructor(private readonly maxFrame = DEFAULT_MAX_FRAME) {}

  push(chunk: Buffer): { messages: WireMessage[]; error?: string } {
    const messages: WireMessage[] = [];
    if (this.failed) return { messages, error: this.failed };
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (this.buffered >= FRAME_HEADER_BYTES) {
      const length = this.peekLength();
      if (length === 0 || length > this.maxFrame) {
        return this.fail(messages, `frame length ${length} is outside 1..${this.maxFrame}`);
      }
      if (this.buffered < FRAME_HEADER_BYTES + length) break;
      const payload = this.take(FRAME_HEADER_BYTES + length).subarray(FRAME_HEADER_BYTES);
      const decoded = decodePayload(payload);
      if (typeof decoded === 'string') return this.fail(messages, decoded);
      messages.push(decoded);
    }
    return { messages };
  }

  /** Bytes received but not yet a whole frame. */
  get pending(): number {
    return this.buffered;
  }

  private fail(messages: WireMessage[], error: string) {
    this.failed = error;
    this.chunks = [];
    this.buffered = 0;
    return { messages, error };
  }

  private peekLength(): number {
    const head = this.chunks[0]!.length >= FRAME_HEADER_BYTES ? this.chunks[0]! : this.gather();
    return head.readUInt32BE(0);
  }

  private gather(): Buffer {
    const all = Buffer.concat(this.chunks);
    this.chunks = [all];
    return all;
  }

  private take(n: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0]! : this.gather();
    const out = all.subarray(0, n);
    const rest = all.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered -= n;
    return out;
  }
}

/** One payload to a message, or the reason it is not one. */
export function decodePayload(payload: Buffer): WireMessage | string {
  let value: unknown;
  try {
    value = unpackr.unpack(payload);
  } catch (err) {
    return `undecodable frame: ${(err as Error).message}`;
  }
  return messageProblem(value) ?? (value as WireMessage);
}
