import { describe, expect, it } from 'vitest';
import { ANY_SOURCE, ANY_TAG } from '../src/constants';
import { DataKind } from '../src/data';
import { ErrorClass } from '../src/errors';
import { deliverBytes, matchStatus } from '../src/matching/delivery';
import { Matcher } from '../src/matching/matcher';
import { UnexpectedMessage } from '../src/matching/unexpected';
import { Proc } from '../src/proc';
import { ReqFlag, ReqType, RpiRequest } from '../src/rpi/request';

const procs = [0, 1, 2].map(
  (r) => new Proc({ node: 0, pid: 100 + r, index: r, grank: r }, '127.0.0.1', 'n0'),
);

function recv(rank: number, tag: number, cid = 0, buf: Uint8Array | null = new Uint8Array(16)) {
  const r = new RpiRequest();
  r.type = ReqType.RECV;
  r.rank = rank;
  r.tag = tag;
  r.cid = cid;
  r.buf = buf;
  r.kind = buf ? DataKind.UINT8 : DataKind.OBJECT;
  return r;
}

function header(cid: number, rank: number, tag: number, length: number, kind: number, seq: number) {
  return { cid, rank, tag, length, kind, seq };
}

function msg(rank: number, tag: number, cid = 0, length = 4) {
  return new UnexpectedMessage(procs[rank]!, header(cid, rank, tag, length, DataKind.UINT8, 1), 0);
}

describe('Matcher', () => {
  it('matches an incoming message with the earliest-posted fitting receive', () => {
    const m = new Matcher();
    const a = recv(1, 5);
    const any = recv(ANY_SOURCE, 5);
    const b = recv(1, 5);
    const anyTag = recv(1, ANY_TAG);
    for (const r of [a, any, b, anyTag]) m.post(r);
    expect(m.postedCount).toBe(4);
    expect(m.takePosted(0, 1, 5)).toBe(a);
    expect(m.takePosted(0, 2, 5)).toBe(any);
    expect(m.takePosted(0, 1, 5)).toBe(b);
    expect(m.takePosted(0, 1, 9)).toBe(anyTag);
    expect(m.takePosted(0, 1, 5)).toBeNull();
    expect(m.postedCount).toBe(0);
  });

  it('prefers an earlier ANY_SOURCE receive over a later specific one', () => {
    const m = new Matcher();
    const any = recv(ANY_SOURCE, 3);
    const specific = recv(2, 3);
    m.post(any);
    m.post(specific);
    expect(m.takePosted(0, 2, 3)).toBe(any);
    expect(m.takePosted(0, 2, 3)).toBe(specific);
  });

  it('keeps communicators apart and lets ANY_TAG match only tags >= 0', () => {
    const m = new Matcher();
    m.post(recv(1, ANY_TAG, 7));
    expect(m.takePosted(0, 1, 1)).toBeNull();
    expect(m.takePosted(7, 1, -4)).toBeNull();
    expect(m.takePosted(7, 1, 0)).not.toBeNull();
  });

  it('gives a receive the earliest-arrived unexpected message, across sources for ANY_SOURCE', () => {
    let arrivals = 0;
    const m = new Matcher(() => arrivals++);
    const first = msg(2, 1);
    const second = msg(1, 1);
    const third = msg(2, 2);
    for (const x of [first, second, third]) m.addUnexpected(x);
    expect(arrivals).toBe(3);
    expect(m.findUnexpected(recv(ANY_SOURCE, ANY_TAG))).toBe(first);
    expect(m.takeUnexpected(recv(1, ANY_TAG))).toBe(second);
    expect(m.takeUnexpected(recv(ANY_SOURCE, 2))).toBe(third);
    expect(m.takeUnexpected(recv(ANY_SOURCE, ANY_TAG))).toBe(first);
    expect(m.unexpectedCount).toBe(0);
    expect(m.takeUnexpected(recv(ANY_SOURCE, ANY_TAG))).toBeNull();
  });

  it('takes posted receives back (cancel) and lists what is queued', () => {
    const m = new Matcher();
    const a = recv(1, 1);
    const b = recv(ANY_SOURCE, 1);
    m.post(a);
    m.post(b);
    expect(m.posted()).toEqual([a, b]);
    expect(m.unpost(a)).toBe(true);
    expect(m.unpost(a)).toBe(false);
    expect(m.takePosted(0, 1, 1)).toBe(b);
    const u = msg(0, 0);
    m.addUnexpected(u);
    expect(m.unexpected()).toEqual([u]);
    expect(m.removeUnexpected(u)).toBe(true);
    expect(m.removeUnexpected(u)).toBe(false);
  });

  it('scales: 10000 queued messages from one source are matched in order', () => {
    const m = new Matcher();
    const all = Array.from({ length: 10_000 }, (_, i) => msg(1, i % 3));
    for (const x of all) m.addUnexpected(x);
    for (let i = 0; i < all.length; i++) expect(m.takeUnexpected(recv(1, ANY_TAG))).toBe(all[i]);
  });
});

describe('matchStatus and deliverBytes', () => {
  it('fills the status and delivers into the buffer', () => {
    const r = recv(1, 4);
    const n = matchStatus(r, procs[1]!, header(0, 1, 4, 3, DataKind.INT8, 9));
    expect([n, r.stSource, r.stTag, r.stLength, r.stKind, r.seq, r.proc]).toEqual([
      3,
      1,
      4,
      3,
      DataKind.INT8,
      9,
      procs[1],
    ]);
    deliverBytes(r, new Uint8Array([7, 8, 9]), false);
    expect([...r.buf!.subarray(0, 4)]).toEqual([7, 8, 9, 0]);
  });

  it('truncates with ERR_TRUNCATE and delivers what fits', () => {
    const r = recv(1, 4, 0, new Uint8Array(2));
    expect(matchStatus(r, procs[1]!, header(0, 1, 4, 5, DataKind.UINT8, 1))).toBe(2);
    expect(r.flags & ReqFlag.TRUNC).toBeTruthy();
    expect(r.error?.errorClass).toBe(ErrorClass.ERR_TRUNCATE);
    deliverBytes(r, new Uint8Array([1, 2, 3, 4, 5]), false);
    expect([...r.buf!]).toEqual([1, 2]);
  });

  it('flags an object message received into a typed buffer as ERR_TYPE', () => {
    const r = recv(1, 4);
    matchStatus(r, procs[1]!, header(0, 1, 4, 5, DataKind.OBJECT, 1));
    expect(r.error?.className).toBe('ERR_TYPE');
  });

  it('adopts or copies for a receive without a buffer', () => {
    const data = new Uint8Array([1, 2, 3]);
    const a = recv(1, 1, 0, null);
    matchStatus(a, procs[1]!, header(0, 1, 1, 3, DataKind.UINT8, 1));
    deliverBytes(a, data, true);
    expect(a.buf).toBe(data);
    const b = recv(1, 1, 0, null);
    matchStatus(b, procs[1]!, header(0, 1, 1, 3, DataKind.UINT8, 1));
    deliverBytes(b, data, false);
    expect(b.buf).not.toBe(data);
    expect([...b.buf!]).toEqual([1, 2, 3]);
  });
});
