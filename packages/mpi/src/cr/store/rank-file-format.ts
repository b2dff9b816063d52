import { createHash } from 'node:crypto';
import { CheckpointFileError, CheckpointStoreError } from './store-errors';

/**
 * The rank file: self-describing, so a file found on its own says what it is.
 *
 *     offset  size  field
 *          0     8  magic "SSI-CKPT"
 *          8     4  format version (u32 LE), 1
 *         12     4  header length H (u32 LE)
 *         16     8  body length B (u64 LE)
 *         24     H  header, UTF-8 JSON: { jobId, series, rank, size, module,
 *                                         sections: [{ name, bytes }] }
 *     24 + H     B  the sections' bytes, in the order of the table
 * 24 + H + B    32  sha256 of everything before it
 */
export const RANK_FILE_MAGIC = 'SSI-CKPT';
export const RANK_FILE_VERSION = 1;
const FIXED = 24;
const DIGEST = 32;

/** Who wrote a rank file: the job, its size and cr module, and the file's place in the store. */
export interface RankFileMeta {
  jobId: string;
  series: number;
  rank: number;
  size: number;
  /** the cr module that wrote it */
  module: string;
}

/** One named part of a rank's state (the application's, the MPI layer's, an rpi's, …). */
export interface RankFileSection {
  name: string;
  bytes: Uint8Array;
}

/** A rank file read back and verified. */
export interface RankFile {
  meta: RankFileMeta;
  sections: Map<string, Uint8Array>;
}

interface Header extends RankFileMeta {
  sections: { name: string; bytes: number }[];
}

/** The file's bytes: fixed part, header, body, digest. */
export function encodeRankFile(meta: RankFileMeta, sections: readonly RankFileSection[]): Buffer {
  checkSections(sections);
  const table = sections.map((s) => ({ name: s.name, bytes: s.bytes.byteLength }));
  const header = Buffer.from(JSON.stringify({ ...meta, sections: table } satisfies Header));
  const bodyLength = table.reduce((n, s) => n + s.bytes, 0);
  const out = Buffer.allocUnsafe(FIXED + header.length + bodyLength + DIGEST);
  out.write(RANK_FILE_MAGIC, 0, 'latin1');
  out.writeUInt32LE(RANK_FILE_VERSION, 8);
  out.writeUInt32LE(header.length, 12);
  out.writeBigUInt64LE(BigInt(bodyLength), 16);
  header.copy(out, FIXED);
  let at = FIXED + header.length;
  for (const s of sections) {
    out.set(s.bytes, at);
    at += s.bytes.byteLength;
  }
  createHash('sha256').update(out.subarray(0, at)).digest().copy(out, at);
  return out;
}

/**
 * Parses and verifies a rank file: magic, version, length, checksum, header, and that it is the
 * file of `expected` (a file copied into the wrong place is not used). `file` names it in errors.
 */
export function decodeRankFile(
  bytes: Buffer,
  file: string,
  expected: { series: number; rank: number },
): RankFile {
  const fail = (problem: string): never => {
    throw new CheckpointFileError(file, problem);
  };
  // The magic first: a foreign file is named as such, whatever its length.
  if (bytes.length < 8 || bytes.toString('latin1', 0, 8) !== RANK_FILE_MAGIC) {
    fail(`not a checkpoint rank file (it does not start with "${RANK_FILE_MAGIC}")`);
  }
  if (bytes.length < FIXED + DIGEST) {
    fail(`${bytes.length} bytes is too short for a rank file (at least ${FIXED + DIGEST})`);
  }
  const version = bytes.readUInt32LE(8);
  if (version !== RANK_FILE_VERSION) {
    fail(`rank file format version ${version}; this library reads version ${RANK_FILE_VERSION}`);
  }
  const headerLength = bytes.readUInt32LE(12);
  const bodyLength = bytes.readBigUInt64LE(16);
  const total = BigInt(FIXED + headerLength + DIGEST) + bodyLength;
  if (total !== BigInt(bytes.length)) {
    fail(
      `length mismatch: its header says ${total} bytes, the file has ${bytes.length} (file damaged or truncated)`,
    );
  }
  const end = bytes.length - DIGEST;
  const digest = createHash('sha256').update(bytes.subarray(0, end)).digest();
  if (!digest.equals(bytes.subarray(end))) fail('checksum mismatch (file damaged or truncated)');
  const header = parseHeader(bytes.toString('utf8', FIXED, FIXED + headerLength), fail);
  if (header.series !== expected.series || header.rank !== expected.rank) {
    fail(
      `holds series ${header.series} rank ${header.rank}, expected series ${expected.series} rank ${expected.rank} (was the file moved?)`,
    );
  }
  const covered = header.sections.reduce((n, s) => n + s.bytes, 0);
  if (BigInt(covered) !== bodyLength) {
    fail(`its section table covers ${covered} of ${bodyLength} body bytes`);
  }
  const sections = new Map<string, Uint8Array>();
  let at = FIXED + headerLength;
  for (const s of header.sections) {
    sections.set(s.name, new Uint8Array(bytes.buffer, bytes.byteOffset + at, s.bytes));
    at += s.bytes;
  }
  const { sections: _table, ...meta } = header;
  return { meta, sections };
}

function parseHeader(text: string, fail: (problem: string) => never): Header {
  let h: unknown;
  try {
    h = JSON.parse(text);
  } catch {
    return fail('its header is not valid JSON');
  }
  const o = h as Record<string, unknown>;
  const isCount = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
  if (typeof o !== 'object' || o === null) return fail('its header is not an object');
  if (typeof o.jobId !== 'string' || typeof o.module !== 'string') {
    return fail('its header lacks jobId or module');
  }
  if (!isCount(o.series) || !isCount(o.rank) || !isCount(o.size)) {
    return fail('its header lacks series, rank or size (non-negative integers)');
  }
  const table = o.sections;
  if (
    !Array.isArray(table) ||
    !table.every((s) => typeof s?.name === 'string' && isCount(s?.bytes))
  ) {
    return fail('its section table is not a list of { name, bytes }');
  }
  return o as unknown as Header;
}

/** Sections as given by a caller: names unique and non-empty, bytes a Uint8Array. */
function checkSections(sections: readonly RankFileSection[]): void {
  if (!Array.isArray(sections)) {
    throw new CheckpointStoreError('sections must be a list of { name, bytes }');
  }
  const seen = new Set<string>();
  for (const [i, s] of sections.entries()) {
    if (typeof s?.name !== 'string' || s.name === '') {
      throw new CheckpointStoreError(`section ${i} has no name (expected a non-empty string)`);
    }
    if (!(s.bytes instanceof Uint8Array)) {
      throw new CheckpointStoreError(`section "${s.name}": bytes must be a Uint8Array`);
    }
    if (seen.has(s.name)) throw new CheckpointStoreError(`section "${s.name}" is given twice`);
    seen.add(s.name);
  }
}
