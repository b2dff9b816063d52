import { describe, expect, it } from 'vitest';
import { LayoutScatter } from '../src/datatype/layout-scatter';
import { unpackFrom } from '../src/datatype/pack';
import { Datatype, FLOAT64, INT16, INT32, UINT8 } from '../src/index';

/**
 * The incremental unpacker of scattered receives (issue 20) against `unpackFrom` (the staged
 * path's one-pass unpack): the packed form of a message, handed over in chunks that begin and end
 * anywhere (inside an element, inside a block, at odd addresses), in order and out of order,
 * partly through `run` views, must leave the user's buffer byte for byte as unpacking it whole
 * does — and leave every byte outside the layout alone.
 */

/** A deterministic pseudo-random sequence (tests must be repeatable). */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x100000000;
  };
}

interface Case {
  name: string;
  type: Datatype;
  count: number;
  /** Bytes before the view's start inside its ArrayBuffer (negative displacements reach there). */
  before: number;
}

const struct = Datatype.struct([1, 2, 1], [0, 3, 12], [UINT8, INT32, INT16]);
const cases: Case[] = [
  { name: 'column of doubles', type: Datatype.vector(4096, 1, 8, FLOAT64), count: 1, before: 0 },
  { name: 'blocks of 3 doubles', type: Datatype.vector(700, 3, 7, FLOAT64), count: 2, before: 0 },
  { name: 'long blocks', type: Datatype.vector(16, 300, 512, FLOAT64), count: 1, before: 0 },
  { name: 'negative stride', type: Datatype.vector(500, 2, -5, INT32), count: 2, before: 20000 },
  {
    name: 'indexed, negative displacement',
    type: Datatype.indexed([3, 1, 17, 2], [10, -4, 30, 0], INT32),
    count: 40,
    before: 64,
  },
  { name: 'struct of odd sizes', type: struct, count: 300, before: 0 },
  {
    name: 'nested: vector of structs',
    type: Datatype.vector(50, 2, 3, Datatype.resized(struct, 0, 16)),
    count: 3,
    before: 0,
  },
  {
    name: 'subarray',
    type: Datatype.subarray([40, 30], [20, 11], [5, 7], INT16),
    count: 2,
    before: 0,
  },
  { name: 'bytes with holes', type: Datatype.vector(999, 5, 7, UINT8), count: 1, before: 1 },
];
for (const c of cases) c.type.commit();

/** The user's memory for `count` × `type`, filled with a pattern, and the view into it. */
function memory(c: Case): { view: Uint8Array; span: number } {
  const { type, count } = c;
  const reach = (count - 1) * type.extent;
  const high = type.trueLb + type.trueExtent + Math.max(0, reach);
  const span = c.before + high + 16;
  const all = new Uint8Array(span);
  for (let i = 0; i < span; i++) all[i] = (i * 7 + 3) & 255;
  return { view: all.subarray(c.before), span };
}

/** The packed message: distinct bytes, so a byte in the wrong place shows. */
function message(n: number, seed: number): Uint8Array {
  const next = rng(seed);
  const m = new Uint8Array(n);
  for (let i = 0; i < n; i++) m[i] = Math.floor(next() * 256);
  return m;
}

/** What the staged path leaves in the memory: `unpackFrom` of the first `bytes` bytes. */
function expected(c: Case, msg: Uint8Array, bytes: number): Uint8Array {
  const { view } = memory(c);
  unpackFrom(msg, 0, bytes, view, c.type, c.count);
  return new Uint8Array(view.buffer);
}

/** Random chunk lengths that add up to `n`: 1 byte to ~3 KiB, some of them 1-7 bytes. */
function chunks(n: number, next: () => number): number[] {
  const out: number[] = [];
  for (let left = n; left > 0; ) {
    const k = Math.min(
      left,
      next() < 0.3 ? 1 + Math.floor(next() * 7) : 1 + Math.floor(next() * 3000),
    );
    out.push(k);
    left -= k;
  }
  return out;
}

/** Hands `src` to `write` from an address that is misaligned by `shift` bytes (a read buffer). */
function writeAt(s: LayoutScatter, src: Uint8Array, at: number, shift: number): void {
  const carrier = new Uint8Array(src.byteLength + 8);
  carrier.set(src, shift);
  s.write(carrier.subarray(shift, shift + src.byteLength), at);
}

const noCheck = () => null;

/** The first byte where the memories differ ("byte i: got x, want y"), or 'same'. */
function diff(got: Uint8Array, want: Uint8Array): string {
  if (got.byteLength !== want.byteLength) return `${got.byteLength} bytes, not ${want.byteLength}`;
  for (let i = 0; i < got.byteLength; i++) {
    if (got[i] !== want[i]) return `byte ${i}: got ${got[i]}, want ${want[i]}`;
  }
  return 'same';
}

describe('LayoutScatter: chunked receives land as unpacking the whole message does', () => {
  it.each(cases)('$name: in order, chunks of any size and alignment', (c) => {
    const n = c.count * c.type.size;
    for (let seed = 1; seed <= 6; seed++) {
      const next = rng(seed * 101);
      const msg = message(n, seed);
      const { view } = memory(c);
      const s = new LayoutScatter(view, c.type, c.count, noCheck);
      let at = 0;
      for (const k of chunks(n, next)) {
        writeAt(s, msg.subarray(at, at + k), at, Math.floor(next() * 8));
        at += k;
      }
      expect(diff(new Uint8Array(view.buffer), expected(c, msg, n))).toBe('same');
    }
  });

  it.each(cases)('$name: out of order, and through run views where runs are long', (c) => {
    const n = c.count * c.type.size;
    const next = rng(7);
    const msg = message(n, 99);
    const { view } = memory(c);
    const s = new LayoutScatter(view, c.type, c.count, noCheck);
    const pieces: [number, number][] = [];
    let at = 0;
    for (const k of chunks(n, next)) {
      pieces.push([at, k]);
      at += k;
    }
    // Reverse order; every other piece through run() where it yields a view (a direct read).
    pieces.reverse();
    pieces.forEach(([from, k], i) => {
      let p = from;
      while (i % 2 === 0 && p < from + k) {
        const v = s.run(p, 1, from + k - p);
        if (v === null) break;
        v.set(msg.subarray(p, p + v.byteLength));
        p += v.byteLength;
      }
      if (p < from + k) writeAt(s, msg.subarray(p, from + k), p, (p * 3) & 7);
    });
    expect(diff(new Uint8Array(view.buffer), expected(c, msg, n))).toBe('same');
  });

  it.each(cases)('$name: a partial message fills a prefix (truncation, getElements)', (c) => {
    const n = c.count * c.type.size;
    const bytes = Math.floor(n * 0.61) + 3;
    const msg = message(n, 5);
    const { view } = memory(c);
    const s = new LayoutScatter(view, c.type, c.count, noCheck);
    const next = rng(3);
    let at = 0;
    for (const k of chunks(bytes, next)) {
      writeAt(s, msg.subarray(at, at + k), at, 1);
      at += k;
    }
    expect(diff(new Uint8Array(view.buffer), expected(c, msg, bytes))).toBe('same');
  });
});

describe('LayoutScatter: runs, bounds and a refused message', () => {
  it('run gives views of contiguous runs only when they are long enough', () => {
    const t = Datatype.vector(4, 100, 128, INT32).commit();
    const buf = new Int32Array(4 * 128);
    const s = new LayoutScatter(buf, t, 1, noCheck);
    const v = s.run(400 + 40, 64, 10_000);
    // Block 1 starts at element 128 (byte 512); 40 bytes into it, 360 bytes are left in the block.
    expect(v?.byteOffset).toBe(512 + 40);
    expect(v?.byteLength).toBe(360);
    expect(s.run(400 + 40, 361, 10_000)).toBeNull();
    expect(s.run(400 + 40, 1, 8)?.byteLength).toBe(8);
    expect(s.run(1600, 1, 8)).toBeNull(); // past the end
  });

  it('writes past the layout are ignored; a refused match drops every byte', () => {
    const t = Datatype.vector(3, 1, 2, FLOAT64).commit();
    const buf = new Float64Array(6).fill(-1);
    const s = new LayoutScatter(buf, t, 1, (kind) =>
      kind === 99 ? (new Error('mismatch') as never) : null,
    );
    expect(s.matched(99, 24)).not.toBeNull();
    s.write(new Uint8Array(new Float64Array([1, 2, 3]).buffer), 0);
    expect(s.run(0, 1, 24)).toBeNull();
    expect(Array.from(buf)).toEqual([-1, -1, -1, -1, -1, -1]);
    expect(s.matched(0, 24)).toBeNull();
    s.write(new Uint8Array(new Float64Array([1, 2, 3, 4]).buffer), 0);
    expect(Array.from(buf)).toEqual([1, -1, 2, -1, 3, -1]);
  });
});
