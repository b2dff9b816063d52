import { describe, expect, it } from 'vitest';
import { BsendBuffer } from '../src/bsend';
import { BSEND_OVERHEAD, UNDEFINED } from '../src/constants';
import { bytesOf, DataKind, decodeValue, encodeValue, kindOf } from '../src/data';
import { ErrorClass, MpiError } from '../src/errors';
import { EntryGate } from '../src/gate';
import { compareGps, Proc, sortProcs } from '../src/proc';
import { EnvFlag, readEnvelope, writeEnvelope } from '../src/rpi/envelope';
import { Status } from '../src/status';

describe('data encoding', () => {
  it('sends typed arrays, Buffers and DataViews as raw bytes and rebuilds their type', () => {
    const samples: ArrayBufferView[] = [
      Buffer.from('abc'),
      new Uint8Array([1]),
      new Int8Array([-1]),
      new Uint8ClampedArray([9]),
      new Int16Array([-2]),
      new Uint16Array([2]),
      new Int32Array([-3]),
      new Uint32Array([3]),
      new Float32Array([0.5]),
      new Float64Array([1.25]),
      new BigInt64Array([-4n]),
      new BigUint64Array([4n]),
      new DataView(new ArrayBuffer(3)),
    ];
    for (const s of samples) {
      const { bytes, kind } = encodeValue(s);
      expect(kind).not.toBe(DataKind.OBJECT);
      expect(bytes.buffer).toBe(s.buffer); // no copy
      const back = decodeValue(Buffer.from(bytes), kind) as ArrayBufferView;
      expect(back.constructor).toBe(s.constructor);
      expect(Buffer.from(back.buffer, back.byteOffset, back.byteLength)).toEqual(
        Buffer.from(bytes),
      );
    }
  });

  it('copies to align a typed array that arrived at an odd offset', () => {
    const raw = new Uint8Array(17);
    const f = new Float64Array([3.5, -1]);
    raw.set(new Uint8Array(f.buffer), 1);
    const back = decodeValue(raw.subarray(1), DataKind.FLOAT64) as Float64Array;
    expect([...back]).toEqual([3.5, -1]);
  });

  it('encodes other values with msgpackr and reports what cannot be', () => {
    const value = { a: [1, 'x', null], b: new Date(0), c: 2n ** 60n, d: new Set([1]) };
    const { bytes, kind } = encodeValue(value);
    expect(kind).toBe(DataKind.OBJECT);
    expect(decodeValue(bytes, kind)).toEqual(value);
    expect(kindOf('text')).toBe(DataKind.OBJECT);
    expect(() => encodeValue({ f: () => 1 })).not.toThrow(); // functions are dropped by msgpackr
    expect(() => decodeValue(new Uint8Array([0x92, 0x01]), DataKind.OBJECT)).toThrow(MpiError);
    expect(() => decodeValue(new Uint8Array(3), DataKind.FLOAT64)).toThrow(/whole number/);
  });

  it('views bytes without copying', () => {
    const f = new Float32Array(4);
    const b = bytesOf(f);
    expect(b.buffer).toBe(f.buffer);
    expect(b.byteLength).toBe(16);
  });
});

describe('Status', () => {
  it('counts in the receive element type, the sender type, or any other', () => {
    const st = new Status();
    st.byteLength = 24;
    st.kind = DataKind.FLOAT64;
    expect(st.count).toBe(3);
    st.elementBytes = 4;
    expect(st.count).toBe(6);
    expect(st.getCount(Float64Array)).toBe(3);
    expect(st.getCount(new Int16Array(0))).toBe(12);
    expect(st.getCount(16)).toBe(UNDEFINED);
    st.kind = DataKind.OBJECT;
    st.elementBytes = 0;
    expect(st.count).toBe(1);
    expect(st.kindName).toBe('object');
    expect(st.clone()).toEqual(st);
    expect(st.clear().byteLength).toBe(0);
  });
});

describe('BsendBuffer', () => {
  it('charges every message its size plus BSEND_OVERHEAD and refuses what does not fit', () => {
    const one = BsendBuffer.footprint(100);
    expect(one).toBeGreaterThanOrEqual(100 + BSEND_OVERHEAD);
    const b = new BsendBuffer(new Uint8Array(2 * one));
    const x = b.allocate(100);
    const y = b.allocate(100);
    expect(y - x).toBe(one);
    const err = (() => {
      try {
        b.allocate(1);
      } catch (e) {
        return e as MpiError;
      }
    })();
    expect(err?.errorClass).toBe(ErrorClass.ERR_BUFFER);
    expect(err?.message).toMatch(/attach a larger buffer/);
    b.release(x, 100);
    expect(b.allocate(100)).toBe(x);
  });

  it('coalesces freed space and resolves drained() when everything is transmitted', async () => {
    const f = BsendBuffer.footprint(8);
    const b = new BsendBuffer(new Uint8Array(3 * f));
    const offs = [b.allocate(8), b.allocate(8), b.allocate(8)];
    let drained = false;
    const d = b.drained().then(() => {
      drained = true;
    });
    b.release(offs[0]!, 8);
    b.release(offs[2]!, 8);
    b.release(offs[1]!, 8);
    await d;
    expect(drained).toBe(true);
    expect(b.allocate(3 * f - BSEND_OVERHEAD)).toBe(0); // one extent again
  });
});

describe('EntryGate', () => {
  it('runs calls held while closed in call order, before later ones', async () => {
    const g = new EntryGate();
    const order: string[] = [];
    g.run(() => order.push('open'));
    g.close();
    g.run(
      () => order.push('a'),
      () => order.push('a held'),
    );
    const p = g.call(async () => order.push('b'));
    g.run(() => order.push('c'));
    expect(g.query(() => 'answered', 'held')).toBe('held');
    expect(order).toEqual(['open', 'a held']);
    expect(g.waiting).toBe(3);
    g.reopen();
    g.run(() => order.push('d'));
    await p;
    expect(order).toEqual(['open', 'a held', 'a', 'b', 'c', 'd']);
    expect(g.query(() => 'answered', 'held')).toBe('answered');
  });

  it('settles a held call as the call does, also when it throws', async () => {
    const g = new EntryGate();
    g.close();
    const ok = g.call(async () => 7);
    const bad = g.call(() => {
      throw new Error('boom');
    });
    g.reopen();
    await expect(ok).resolves.toBe(7);
    await expect(bad).rejects.toThrow('boom');
  });

  it('counts a call as running until its promise settles, or until it reports its return', async () => {
    const g = new EntryGate();
    let running = 0;
    g.calls = { callEntered: () => running++, callReturned: () => running-- };
    let finish!: () => void;
    const pending = g.call(() => new Promise<void>((r) => (finish = r)));
    expect(running).toBe(1);
    const reported = g.callReporting((returned) => {
      returned(); // finished before returning
      return Promise.resolve(3);
    });
    expect(running).toBe(1); // counted as returned at once; the pending one runs
    expect(await reported).toBe(3);
    finish();
    await pending;
    expect(running).toBe(0); // dropped before the caller continued
    await expect(g.call(() => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(running).toBe(0);
    for (const shape of ['call', 'callReporting'] as const)
      expect(() =>
        g[shape](() => {
          throw new Error('sync');
        }),
      ).toThrow('sync');
    expect(running).toBe(0);
    g.close();
    const held = g.callReporting(async (returned) => {
      returned();
      return 'ran';
    });
    expect(running).toBe(0); // not entered while the gate is closed
    g.reopen();
    expect(await held).toBe('ran');
    expect(running).toBe(0);
  });
});

describe('process list and envelopes', () => {
  it('sorts process entries the same way everywhere', () => {
    const mk = (grank: number, node: number) =>
      new Proc({ node, pid: 1, index: grank, grank }, 'h', 'n');
    const list = sortProcs([mk(2, 0), mk(0, 1), mk(1, 1)]);
    expect(list.map((p) => p.gps.grank)).toEqual([0, 1, 2]);
    expect(list.map((p) => p.listIndex)).toEqual([0, 1, 2]);
    expect(compareGps(list[0]!.gps, list[1]!.gps)).toBeLessThan(0);
  });

  it('writes and reads the 32-byte envelope', () => {
    const b = Buffer.alloc(40);
    writeEnvelope(
      b,
      8,
      123,
      -7,
      EnvFlag.LONG | (DataKind.FLOAT64 << 16),
      3,
      0x7fffffff,
      0xffffffff,
      9,
      10,
    );
    expect(readEnvelope(b, 8)).toEqual({
      length: 123,
      tag: -7,
      flags: EnvFlag.LONG,
      kind: DataKind.FLOAT64,
      rank: 3,
      cid: 0x7fffffff,
      seq: 0xffffffff,
      sid: 9,
      rid: 10,
    });
  });
});
