import { expect, it } from 'vitest';
import { RollbackLog } from '../src/cr/rollback-log';
import { MPI } from '../src/index';
import { soloMpi } from './helpers/loop-rpi';

/**
 * Blocking sends and receives report their own return to the entry gate (no reaction of the
 * gate's per call). Every path must report exactly once: a path that forgets leaves the rank
 * never quiet (the rollback log then grows for good), one that reports twice makes it quiet while
 * a call still runs. The cr rollback log's `quiet` shows both.
 */
const solo = soloMpi();

it('every blocking send and receive path leaves the rank quiet once it returned, and not before', async () => {
  const mpi = solo();
  const w = mpi.COMM_WORLD;
  w.errhandler = MPI.ERRORS_RETURN;
  const engine = w.host.engine;
  const log = new RollbackLog(() => engine.activeCount);
  engine.crLog = log;
  engine.gate.calls = log;
  const quietAfter = async (call: Promise<unknown>) => {
    await call.catch(() => {});
    return log.quiet;
  };
  try {
    mpi.attachBuffer(1024);
    const paths: [string, () => Promise<unknown>][] = [
      ['send to PROC_NULL', () => w.send(new Uint8Array(1), MPI.PROC_NULL, 0)],
      ['recv from PROC_NULL', () => w.recv(new Uint8Array(1), MPI.PROC_NULL, 0)],
      ['recv of a value from PROC_NULL', () => w.recv(MPI.PROC_NULL, 0)],
      ['send to a bad rank', () => w.send(new Uint8Array(1), 9, 0)],
      ['recv from a bad rank', () => w.recv(new Uint8Array(1), 9, 0)],
      ['recv of a value from a bad rank', () => w.recv(9, 0)],
      ['send of a value that cannot be encoded', () => w.send(() => 1, 0, 0)],
      ['send to self', () => w.send(Uint8Array.of(1, 2), 0, 5)],
      ['recv of what is here', () => w.recv(new Uint8Array(2), 0, 5)],
      ['bsend', () => w.bsend(Uint8Array.of(3), 0, 6)],
      ['recv of a value', () => w.recv(0, 6)],
      [
        'ssend to self with its receive posted',
        async () => {
          const r = w.irecv(new Uint8Array(1), 0, 7);
          await w.ssend(Uint8Array.of(4), 0, 7);
          await r.wait();
        },
      ],
    ];
    for (const [what, call] of paths)
      expect([what, await quietAfter(call())]).toEqual([what, true]);

    // A receive that waits is a running call until its message came, and only until then.
    const waiting = w.recv(new Uint8Array(1), 0, 8);
    await new Promise((r) => setImmediate(r));
    expect(log.quiet).toBe(false);
    await w.send(Uint8Array.of(5), 0, 8);
    await waiting;
    expect(log.quiet).toBe(true);
    expect(log.sends).toHaveLength(0);
    expect(log.recvs).toHaveLength(0);
  } finally {
    await mpi.detachBuffer();
    engine.crLog = null;
    engine.gate.calls = null;
  }
});
