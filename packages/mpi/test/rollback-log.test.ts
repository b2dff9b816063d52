import { describe, expect, it } from 'vitest';
import { RollbackLog } from '../src/cr/rollback-log';
import type { Proc } from '../src/proc';
import { ReqType, type RpiRequest } from '../src/rpi/request';

/** Only the fields the log reads. */
function done(type: number, seq: number, proc: Proc, buf: Uint8Array | null = null): RpiRequest {
  return {
    type,
    seq,
    proc,
    cancelled: false,
    error: null,
    cid: 4,
    stSource: 1,
    stTag: 7,
    stKind: 0,
    buf,
    stLength: buf === null ? 0 : buf.byteLength - 1,
  } as unknown as RpiRequest;
}

const peer = { gps: { grank: 1 } } as unknown as Proc;

describe('the rollback log', () => {
  it('keeps what completed while the rank is not quiet, and forgets it at the quiet point', () => {
    let active = 0;
    const log = new RollbackLog(() => active);
    log.callEntered();
    active = 1;
    const bytes = Uint8Array.of(1, 2, 3, 4);
    log.completed(done(ReqType.SEND, 11, peer));
    log.completed(done(ReqType.RECV, 12, peer, bytes));
    expect(log.sends.map((s) => [s.dest, s.seq])).toEqual([[peer, 11]]);
    expect(log.recvs).toHaveLength(1);
    expect([...log.recvs[0]!.data]).toEqual([1, 2, 3]); // the received length, by reference
    expect(log.recvs[0]!.data.buffer).toBe(bytes.buffer);
    active = 0;
    log.callReturned();
    expect(log.quiet).toBe(true);
    expect(log.sends).toHaveLength(0);
    expect(log.recvs).toHaveLength(0);
  });

  it('reuses its records from one quiet point to the next and lets go of the buffers', () => {
    const log = new RollbackLog(() => 0);
    log.requestOpened();
    log.completed(done(ReqType.RECV, 1, peer, new Uint8Array(8)));
    const first = log.recvs[0]!;
    log.requestClosed(); // quiet: forgotten
    expect(first.buf).toBeNull(); // the program's buffer is no longer held
    log.requestOpened();
    log.completed(done(ReqType.RECV, 2, peer, Uint8Array.of(9, 9)));
    log.completed(done(ReqType.RECV, 3, peer, Uint8Array.of(8, 8)));
    expect(log.recvs[0]).toBe(first); // the same record object, refilled
    expect(log.recvs.map((r) => [r.seq, [...r.data]])).toEqual([
      [2, [9]],
      [3, [8]],
    ]);
  });

  it('ignores cancelled and failed requests and requests without a peer', () => {
    const log = new RollbackLog(() => 1);
    const cancelled = { ...done(ReqType.SEND, 1, peer), cancelled: true } as RpiRequest;
    const failed = { ...done(ReqType.SEND, 2, peer), error: new Error('x') } as RpiRequest;
    const selfless = { ...done(ReqType.SEND, 3, peer), proc: null } as RpiRequest;
    for (const r of [cancelled, failed, selfless]) log.completed(r);
    expect(log.sends).toHaveLength(0);
  });
});
