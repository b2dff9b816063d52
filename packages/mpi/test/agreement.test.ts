import { describe, expect, it } from 'vitest';
import type { ProcessInfo } from '../src/index';
import { MPI } from '../src/index';
import { loopRpi, soloRuntime } from './helpers/loop-rpi';

/**
 * Per-framework module agreement at MPI.init: every rank's `ProcessInfo.modules` goes through the
 * GPS exchange and `checkAgreement` compares every framework in it, not only `rpi`. The other
 * rank is simulated by the runtime's allgather (MPI.init runs once per process).
 */
describe('module agreement at MPI.init', () => {
  it('fails init when another rank selected a different module of a second framework', async () => {
    const loop = loopRpi();
    const solo = soloRuntime();
    const seen: ProcessInfo[][] = [];
    const other: ProcessInfo = {
      gps: { node: 1, pid: 4711, index: 1, grank: 1 },
      host: '127.0.0.1',
      processorName: 'there',
      modules: {
        rpi: { name: 'loop', version: '1.0.0', origin: 'static' },
        crmpi: { name: 'self', version: '1.2.0', origin: '/opt/ssi/cr-self' },
      },
    };
    const runtime = {
      ...solo.runtime,
      size: 2,
      allgather: async <T>(mine: T): Promise<T[]> => {
        const all = [mine, other] as unknown as ProcessInfo[];
        seen.push(all);
        return all as unknown as T[];
      },
    };
    void MPI.init({
      runtime,
      modules: [loop.module],
      ssi: { rpi: 'loop', mpi_base_abort_on_unhandled: 0 },
      searchFrom: [],
    });
    const deadline = Date.now() + 10_000;
    while (solo.aborts.length === 0) {
      if (Date.now() > deadline) throw new Error('timed out waiting for MPI.init to abort the job');
      await new Promise((r) => setTimeout(r, 20));
    }
    // This rank sent its own choice per framework.
    expect(seen[0]![0]!.modules).toEqual({
      rpi: { name: 'loop', version: '1.0.0', origin: expect.any(String) },
    });
    const { message } = solo.aborts[0]!;
    expect(message).toContain('MPI.init failed on rank 0');
    expect(message).toContain('processes disagree on the crmpi module');
    expect(message).toMatch(/rank 0 \(node 0, pid \d+\): none/);
    expect(message).toContain('rank 1 (node 1, pid 4711): self 1.2.0 (/opt/ssi/cr-self)');
  });
});
