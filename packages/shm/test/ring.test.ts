import { describe, expect, it } from 'vitest';
import { isShmError, SpscRing } from '../src/index';

function ring(capacity: number, shared = false) {
  const buf = shared ? new SharedArrayBuffer(64 + capacity) : new ArrayBuffer(64 + capacity);
  return new SpscRing(buf, 0, 64, capacity);
}

const bytes = (n: number, seed: number) =>
  Uint8Array.from({ length: n }, (_, i) => (i * 7 + seed) & 0xff);

describe('SpscRing (postbox)', () => {
  it('starts empty and returns records in order with their meta word', () => {
    const r = ring(256);
    expect(r.isEmpty()).toBe(true);
    expect(r.tryRead()).toBeNull();
    expect(r.peekMeta()).toBe(-1);
    expect(r.tryWrite(7, bytes(10, 1))).toBe(true);
    expect(r.tryWrite(0xfffffff0, bytes(0, 0))).toBe(true);
    expect(r.peekMeta()).toBe(7);
    const a = r.tryRead()!;
    expect(a.meta).toBe(7);
    expect(a.data).toEqual(bytes(10, 1));
    const b = r.tryRead()!;
    expect(b.meta).toBe(0xfffffff0);
    expect(b.data.length).toBe(0);
    expect(r.isEmpty()).toBe(true);
  });

  it('peek hands the next record over in place until skip removes it; another kind or a wrapped payload is not', () => {
    const r = ring(64);
    expect(r.peek(1)).toBeNull(); // empty
    expect(r.tryWrite(1, bytes(3, 1), bytes(5, 9))).toBe(true); // header and body, one record
    expect(r.peek(2)).toBeNull(); // another kind: stays for readPayload
    const view = r.peek(1)!;
    expect(view).toEqual(Uint8Array.from([...bytes(3, 1), ...bytes(5, 9)]));
    expect(r.peek(1)).toEqual(view); // not removed yet
    expect(r.used()).toBe(16);
    r.skip();
    expect(r.isEmpty()).toBe(true);
    r.skip(); // nothing peeked: no effect
    expect(r.isEmpty()).toBe(true);
    // 16 bytes used and freed: a 48-byte payload now starts at 24 and wraps the end (64)
    expect(r.tryWrite(1, bytes(48, 4))).toBe(true);
    expect(r.peek(1)).toBeNull();
    expect(r.readPayload()).toEqual(bytes(48, 4));
    expect(r.isEmpty()).toBe(true);
  });

  it('refuses a read while a peeked record is held, which would move the tail under it', () => {
    const r = ring(64);
    expect(r.tryWrite(1, bytes(3, 1))).toBe(true);
    expect(r.tryWrite(1, bytes(2, 7))).toBe(true);
    expect(r.peek(1)).toEqual(bytes(3, 1));
    expect(() => r.readPayload()).toThrow(/peek\(\) returned is still held: skip\(\) it first/);
    r.skip();
    expect(r.readPayload()).toEqual(bytes(2, 7));
    expect(r.isEmpty()).toBe(true);
  });

  it('reports full, then accepts again once the consumer made room', () => {
    const r = ring(64); // 64 bytes: a 24-byte payload takes 32
    expect(r.maxPayload).toBe(56);
    expect(r.tryWrite(1, bytes(24, 1))).toBe(true);
    expect(r.tryWrite(2, bytes(24, 2))).toBe(true);
    expect(r.used()).toBe(64);
    expect(r.canWrite(0)).toBe(false);
    expect(r.tryWrite(3, bytes(1, 3))).toBe(false); // full: nothing written
    expect(r.tryRead()!.meta).toBe(1);
    expect(r.tryWrite(3, bytes(24, 3))).toBe(true);
    expect(r.tryRead()!.data).toEqual(bytes(24, 2));
    expect(r.tryRead()!.data).toEqual(bytes(24, 3));
    expect(r.tryRead()).toBeNull();
  });

  it('a record of exactly the capacity fits an empty ring; a larger one is refused with BAD_ARGS', () => {
    const r = ring(128);
    expect(r.tryWrite(1, bytes(120, 9))).toBe(true);
    expect(r.tryRead()!.data).toEqual(bytes(120, 9));
    try {
      r.tryWrite(1, bytes(121, 0));
      expect.unreachable();
    } catch (e) {
      expect(isShmError(e, 'BAD_ARGS')).toBe(true);
      expect((e as Error).message).toMatch(/pool/);
    }
  });

  it('wraps around: payloads split across the end come back intact, many times over', () => {
    for (const shared of [false, true]) {
      const r = ring(200, shared);
      let w = 0;
      let rd = 0;
      const sizes = [0, 1, 7, 8, 9, 33, 100, 150, 192, 5];
      for (let round = 0; round < 2000; round++) {
        const n = sizes[round % sizes.length]!;
        while (!r.tryWrite(w, bytes(n, w & 0xff))) {
          const got = r.tryRead()!;
          expect(got.meta).toBe(rd);
          expect(got.data).toEqual(bytes(sizes[rd % sizes.length]!, rd & 0xff));
          rd++;
        }
        w++;
      }
      while (rd < w) {
        const got = r.tryRead()!;
        expect(got.meta).toBe(rd);
        expect(got.data).toEqual(bytes(sizes[rd % sizes.length]!, rd & 0xff));
        rd++;
      }
      expect(r.isEmpty()).toBe(true);
    }
  });

  it('writes a payload given in two parts as one record', () => {
    const r = ring(64);
    r.tryWrite(5, bytes(3, 1), bytes(4, 2));
    expect(Array.from(r.tryRead()!.data)).toEqual([...bytes(3, 1), ...bytes(4, 2)]);
  });

  it('detects a corrupted length instead of reading garbage', () => {
    const buf = new ArrayBuffer(64 + 64);
    const r = new SpscRing(buf, 0, 64, 64);
    r.tryWrite(1, bytes(8, 1));
    new Uint32Array(buf, 64, 1)[0] = 1000; // scribble over the record header
    expect(() => r.tryRead()).toThrow(/corrupted/);
  });

  it('rejects bad geometry with BAD_ARGS', () => {
    const buf = new ArrayBuffer(1024);
    expect(() => new SpscRing(buf, 0, 64, 12)).toThrow(/multiple of 8/);
    expect(() => new SpscRing(buf, 0, 64, 100)).toThrow(/multiple of 8/);
    expect(() => new SpscRing(buf, 0, 60, 64)).toThrow(/aligned/);
    expect(() => new SpscRing(buf, 0, 64, 1024)).toThrow(/does not fit/);
  });
});
