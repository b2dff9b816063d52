import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Mutual authentication of a tcp rpi connection with the job's secret, before any MPI byte is
 * read (DESIGN.md §5 "nobody else gets in"). The secret itself never travels:
 *
 *     connector → acceptor  HELLO     "SSIR" u16 version u16 0 u32 from u32 to
 *                                     nonceC[16] sha256(jobId)[16]              (48 bytes)
 *     acceptor → connector  RESPONSE  "SSIR" nonceA[16] HMAC(secret, "acc"|job|nonceC|from|to)  (52)
 *     connector → acceptor  PROOF     HMAC(secret, "con"|job|nonceA|from|to)                  (32)
 *
 * `from`/`to` are world ranks. The acceptor reads exactly the HELLO and the PROOF before it
 * treats anything as MPI traffic, and closes the connection on any mismatch.
 */
export const MAGIC = Buffer.from('SSIR', 'ascii');
export const VERSION = 1;
export const HELLO_BYTES = 48;
export const RESPONSE_BYTES = 52;
export const PROOF_BYTES = 32;

/** sha256(jobId)[16] by job id: a process has one job (two with spawned ones), hellos many. */
const jobHashes = new Map<string, Buffer>();

function jobHash(jobId: string): Buffer {
  let h = jobHashes.get(jobId);
  if (h === undefined) {
    h = createHash('sha256').update(jobId).digest().subarray(0, 16);
    jobHashes.set(jobId, h);
  }
  return h;
}

function mac(
  secret: Uint8Array,
  role: string,
  jobId: string,
  nonce: Uint8Array,
  from: number,
  to: number,
): Buffer {
  const ids = Buffer.allocUnsafe(8);
  ids.writeUInt32LE(from, 0);
  ids.writeUInt32LE(to, 4);
  return createHmac('sha256', secret)
    .update(`ssi-rpi-tcp|${role}|${jobId}|`)
    .update(nonce)
    .update(ids)
    .digest();
}

export interface Hello {
  from: number;
  to: number;
  nonce: Buffer;
}

export function makeHello(
  jobId: string,
  from: number,
  to: number,
): { bytes: Buffer; nonce: Buffer } {
  const nonce = randomBytes(16);
  const bytes = Buffer.alloc(HELLO_BYTES);
  MAGIC.copy(bytes, 0);
  bytes.writeUInt16LE(VERSION, 4);
  bytes.writeUInt32LE(from, 8);
  bytes.writeUInt32LE(to, 12);
  nonce.copy(bytes, 16);
  jobHash(jobId).copy(bytes, 32);
  return { bytes, nonce };
}

/** Parses a HELLO; returns why it is unacceptable as a string. */
export function parseHello(bytes: Buffer, jobId: string): Hello | string {
  if (!bytes.subarray(0, 4).equals(MAGIC)) return 'not an SSI tcp rpi connection (bad magic)';
  const version = bytes.readUInt16LE(4);
  if (version !== VERSION) return `protocol version ${version}, expected ${VERSION}`;
  if (!bytes.subarray(32, 48).equals(jobHash(jobId))) return 'the peer belongs to another job';
  return {
    from: bytes.readUInt32LE(8),
    to: bytes.readUInt32LE(12),
    nonce: Buffer.from(bytes.subarray(16, 32)),
  };
}

export function makeResponse(
  secret: Uint8Array,
  jobId: string,
  hello: Hello,
): { bytes: Buffer; nonce: Buffer } {
  const nonce = randomBytes(16);
  const bytes = Buffer.alloc(RESPONSE_BYTES);
  MAGIC.copy(bytes, 0);
  nonce.copy(bytes, 4);
  mac(secret, 'acc', jobId, hello.nonce, hello.from, hello.to).copy(bytes, 20);
  return { bytes, nonce };
}

/** Checks the acceptor's RESPONSE; returns its nonce, or why it failed. */
export function checkResponse(
  bytes: Buffer,
  secret: Uint8Array,
  jobId: string,
  nonceC: Buffer,
  from: number,
  to: number,
): Buffer | string {
  if (!bytes.subarray(0, 4).equals(MAGIC)) return 'bad magic in the handshake response';
  const expected = mac(secret, 'acc', jobId, nonceC, from, to);
  if (!timingSafeEqual(expected, bytes.subarray(20, 52))) {
    return 'the peer does not know the job secret';
  }
  return Buffer.from(bytes.subarray(4, 20));
}

export function makeProof(
  secret: Uint8Array,
  jobId: string,
  nonceA: Buffer,
  from: number,
  to: number,
): Buffer {
  return mac(secret, 'con', jobId, nonceA, from, to);
}

export function checkProof(
  bytes: Buffer,
  secret: Uint8Array,
  jobId: string,
  nonceA: Buffer,
  hello: Hello,
): boolean {
  return timingSafeEqual(mac(secret, 'con', jobId, nonceA, hello.from, hello.to), bytes);
}

/**
 * Runs the whole handshake once between two made-up ranks of this job, in this process, and
 * checks that it passes. The first real connection then does not pay for the first run of these
 * functions nor for the first SHA-256, HMAC and random bytes of the process (Node's crypto and
 * OpenSSL set up on first use): 0.3-0.8 ms of the first message of a pair, measured, paid in
 * both processes one after the other. The tcp module runs it while its address exchange is in flight
 * (the process waits there anyway). Nothing of it is kept: fresh nonces on both sides, as always.
 */
export function rehearseHandshake(secret: Uint8Array, jobId: string): void {
  const hello = makeHello(jobId, 0, 1);
  const parsed = parseHello(hello.bytes, jobId);
  if (typeof parsed === 'string') throw new Error(`rpi tcp: handshake rehearsal: ${parsed}`);
  const response = makeResponse(secret, jobId, parsed);
  const nonceA = checkResponse(response.bytes, secret, jobId, hello.nonce, 0, 1);
  if (typeof nonceA === 'string') throw new Error(`rpi tcp: handshake rehearsal: ${nonceA}`);
  const proof = makeProof(secret, jobId, nonceA, 0, 1);
  if (!checkProof(proof, secret, jobId, response.nonce, parsed)) {
    throw new Error('rpi tcp: handshake rehearsal: the proof did not check');
  }
}
