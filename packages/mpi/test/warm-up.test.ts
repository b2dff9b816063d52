import { describe, expect, it } from 'vitest';
import { RollbackLog } from '../src/cr/rollback-log';
import { ANY_SOURCE, ANY_TAG } from '../src/index';
import { within } from '../src/testing/checks';
import { warmUpMessagePaths } from '../src/warm-up';
import { soloMpiSaying } from './helpers/loop-rpi';

/**
 * `mpi_base_warm_up` (on by default): MPI.init runs the message paths once on COMM_SELF
 * (`warm-up.ts`) and leaves nothing behind for the program. In one process (sends to self never
 * leave it); `warm-up-off.test.ts` has the parameter at 0.
 */
const solo = soloMpiSaying({ mpi_verbose: 10, mpi_base_abort_on_unhandled: 0 });
const said = solo.said;

describe('the warm-up of MPI.init', () => {
  it('ran, and says so at mpi_verbose 10', () => {
    expect(solo.mpi().params.get('mpi_base_warm_up')).toBe(true);
    expect(said.join('')).toMatch(/rehearsed the message paths: 3 messages to itself/);
  });

  it('leaves no message and no posted receive on COMM_SELF', async () => {
    const self = solo.mpi().COMM_SELF;
    expect(self.iprobe(ANY_SOURCE, ANY_TAG)).toBeUndefined();
    // A posted receive left by the warm-up would take this message instead of the program's.
    await self.send(new Uint8Array([42]), 0, 0);
    const into = new Uint8Array(1);
    const st = await within(
      self.recv(into, 0, 0),
      'the first message of the program to itself',
      5000,
    );
    expect([into[0], st.tag, st.source]).toEqual([42, 0, 0]);
    expect(self.iprobe(ANY_SOURCE, ANY_TAG)).toBeUndefined();
  });

  it("stays out of a crmpi module's rollback log (no warm-up then)", async () => {
    const self = solo.mpi().COMM_SELF;
    const engine = self.host.engine;
    const lines: string[] = [];
    const verbose = { log: (_level: number, line: string) => lines.push(line) };
    engine.crLog = new RollbackLog(() => 0);
    try {
      // A request left open keeps the rank from being quiet: the log keeps what it saw.
      const pending = self.irecv(new Uint8Array(1), 0, 99);
      await warmUpMessagePaths(self, solo.mpi().params, verbose as never);
      expect(engine.crLog.sends).toHaveLength(0);
      expect(engine.crLog.recvs).toHaveLength(0);
      expect(lines).toEqual(['no warm-up of the message paths: a crmpi module is selected']);
      pending.cancel();
      await pending.wait();
    } finally {
      engine.crLog = null;
    }
    await warmUpMessagePaths(self, solo.mpi().params, verbose as never); // without one it runs again
    expect(lines.at(-1)).toMatch(/rehearsed the message paths/);
    expect(self.iprobe(ANY_SOURCE, ANY_TAG)).toBeUndefined();
  });
});
