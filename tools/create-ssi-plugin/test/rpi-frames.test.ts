import { describe, expect, it } from 'vitest';
import { encodeFrame, FrameReader, Op } from '../templates/rpi/frames.js';

/**
 * The rpi template's wire format: whatever chunks TCP cuts a stream into, the reader gives back
 * the same frames in the same order.
 */
const env = (sendId: number, tag: number) => ({
  op: Op.MESSAGE,
  flags: 1,
  cid: 7,
  rank: 3,
  tag,
  kind: 2,
  seq: sendId + 100,
  sendId,
});

const payloadOf = (n: number, salt: number) =>
  Uint8Array.from({ length: n }, (_, i) => (i * 31 + salt) & 0xff);

describe('the rpi template frames', () => {
  const sizes = [0, 1, 31, 32, 33, 4096, 70_000];
  const frames = sizes.map((n, i) => ({ env: env(i + 1, -(i + 1)), payload: payloadOf(n, i) }));
  const stream = Buffer.concat(frames.map((f) => encodeFrame(f.env, f.payload)));

  it.each([1, 3, 36, 1000, stream.length])('come back whole from chunks of %i bytes', (chunk) => {
    const got: { env: unknown; payload: Uint8Array }[] = [];
    const reader = new FrameReader((e, p) => got.push({ env: e, payload: p }));
    for (let at = 0; at < stream.length; at += chunk) reader.push(stream.subarray(at, at + chunk));
    expect(got.map((g) => g.env)).toEqual(frames.map((f) => f.env));
    got.forEach((g, i) => {
      expect(Buffer.from(g.payload).equals(Buffer.from(frames[i]!.payload)), `frame ${i}`).toBe(
        true,
      );
    });
  });

  it('refuses a frame shorter than its envelope', () => {
    const bad = Buffer.alloc(36);
    bad.writeUInt32LE(8, 0);
    expect(() => new FrameReader(() => {}).push(bad)).toThrow(
      'a frame of 8 bytes is shorter than its envelope',
    );
  });

  it('refuses a payload longer than the limit (a connection not authenticated yet)', () => {
    const reader = new FrameReader(() => {});
    reader.maxPayload = 32;
    expect(() => reader.push(encodeFrame(env(1, 1), payloadOf(33, 0)))).toThrow(
      'a frame of 33 payload bytes, at most 32 expected',
    );
  });
});
