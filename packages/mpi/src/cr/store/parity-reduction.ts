import { xorInto } from './xor';

/** Messages between the ranks of a job while a checkpoint is taken (the cr base provides it). */
export interface RankChannel {
  send(to: number, bytes: Uint8Array): Promise<void>;
  recv(from: number): Promise<Uint8Array>;
}

/** Bytes per message of the reduction: bounded memory in flight, whatever a rank file's size. */
export const PARITY_CHUNK_BYTES = 1 << 20;

/**
 * The XOR of a parity set's files, reduced along the set (PSC's Plan C1 `MPI_Reduce`): the last
 * member sends its file to the one before it, each member XORs its own file in and passes the
 * result on, chunk by chunk; the set's first member (its leader) gets the XOR of every file,
 * zero-padded to the longest. Returns it on the leader, null elsewhere. Every member of `set`
 * must call it with its own file's bytes. No member reads another's file.
 */
export async function reduceParity(
  set: readonly number[],
  me: number,
  bytes: Uint8Array,
  channel: RankChannel,
): Promise<Buffer | null> {
  const at = set.indexOf(me);
  if (at < 0) throw new RangeError(`rank ${me} is not in parity set ${set.join(', ')}`);
  const down = set[at + 1];
  const up = at > 0 ? set[at - 1] : undefined;
  // Lengths first: each member learns the longest file downstream, and sends that many bytes on.
  const downLength = down === undefined ? 0 : readLength(await channel.recv(down));
  const length = Math.max(downLength, bytes.length);
  if (up !== undefined) await channel.send(up, lengthBytes(length));
  const out = up === undefined ? Buffer.alloc(length) : null;
  for (let from = 0; from < length; from += PARITY_CHUNK_BYTES) {
    const n = Math.min(PARITY_CHUNK_BYTES, length - from);
    const chunk = out ? out.subarray(from, from + n) : Buffer.alloc(n);
    if (from < downLength) {
      const got = await channel.recv(down!);
      const expected = Math.min(PARITY_CHUNK_BYTES, downLength - from);
      if (got.length !== expected) {
        throw new Error(
          `parity reduction: rank ${down} sent ${got.length} bytes at offset ${from}, expected ${expected}`,
        );
      }
      chunk.set(got);
    }
    if (from < bytes.length) xorInto(chunk, bytes.subarray(from, Math.min(from + n, bytes.length)));
    if (up !== undefined) await channel.send(up, chunk);
  }
  return out;
}

function lengthBytes(n: number): Uint8Array {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
}

function readLength(b: Uint8Array): number {
  if (b.length !== 8)
    throw new Error(`parity reduction: expected a length (8 bytes), got ${b.length}`);
  return Number(Buffer.from(b.buffer, b.byteOffset, 8).readBigUInt64LE());
}
