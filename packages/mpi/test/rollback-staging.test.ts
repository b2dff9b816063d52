import { expect, it } from 'vitest';
import { RollbackLog } from '../src/cr/rollback-log';
import { Datatype, INT32, pack } from '../src/index';
import { soloMpi } from './helpers/loop-rpi';

/**
 * With a cr module's rollback log on, the log keeps each receive's bytes by reference until the
 * rank's next quiet point. A derived-type receive lands in staging memory first: that memory must
 * not be reused by a later receive while the log still refers to it, or a restart would hand the
 * program the later message's bytes in place of the earlier one's.
 */
const solo = soloMpi();

it('keeps the logged bytes of a staged receive when a later receive stages another message', async () => {
  const mpi = solo();
  const w = mpi.COMM_WORLD;
  const engine = w.host.engine;
  engine.crLog = new RollbackLog(() => 0);
  try {
    // A request left open keeps the rank from being quiet, so the log keeps its records.
    const pending = w.irecv(new Int32Array(1), 0, 99);
    const column = Datatype.vector(4, 1, 3, INT32).commit(); // every third int32
    const first = Int32Array.from({ length: 12 }, (_, i) => 100 + i);
    const second = Int32Array.from({ length: 12 }, (_, i) => 200 + i);
    const packedFirst = new Uint8Array(16);
    pack([first, column, 1], packedFirst, 0);

    for (const data of [first, second]) {
      const send = w.isend([data, column, 1], 0, 5);
      await w.recv([new Int32Array(12), column, 1], 0, 5);
      await send.wait();
    }

    const logged = engine.crLog.recvs.filter((r) => r.tag === 5);
    expect(logged).toHaveLength(2);
    expect([...logged[0]!.data]).toEqual([...packedFirst]);
    pending.cancel();
    await pending.wait();
  } finally {
    engine.crLog = null;
  }
});
