import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Socket } from 'node:net';
import { Packr } from 'msgpackr/pack';

const packr = new Packr({ useRecords: false, moreTypes: true });

/** Control messages between the test launcher and its ranks: u32 length + msgpackr body. */
export function writeFrame(socket: Socket, message: unknown): boolean {
  const body = packr.pack(message);
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32LE(body.byteLength, 0);
  socket.cork();
  socket.write(head);
  const ok = socket.write(body);
  socket.uncork();
  return ok;
}

/** Calls `onFrame` for every complete frame that arrives on `socket`. */
export function readFrames(socket: Socket, onFrame: (message: Record<string, unknown>) => void) {
  let pending: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 4) {
      const len = pending.readUInt32LE(0);
      if (pending.length < 4 + len) break;
      const body = pending.subarray(4, 4 + len);
      pending = pending.subarray(4 + len);
      onFrame(packr.unpack(body) as Record<string, unknown>);
    }
  });
}

/** Proof that a rank knows the job secret: HMAC-SHA256(secret, "rdv|jobId|rank"). */
export function rendezvousProof(secret: Uint8Array, jobId: string, rank: number): Buffer {
  return createHmac('sha256', secret).update(`ssi-test-rendezvous|${jobId}|${rank}`).digest();
}

export function proofMatches(expected: Buffer, got: unknown): boolean {
  if (!(got instanceof Uint8Array) || got.byteLength !== expected.byteLength) return false;
  return timingSafeEqual(expected, got);
}
