import type { SsiModule } from '@ssi/core';
import { afterAll, beforeAll, vi } from 'vitest';
import type { Mpi, Proc, RpiActions, RpiHost, RpiModule, RpiRequest } from '../../src/index';
import { MPI, RankControl, ReqType } from '../../src/index';
import type { JobRuntime } from '../../src/job-runtime';

/**
 * A one-process rpi for in-process tests: every message goes to self, which the MPI layer
 * handles without the rpi (matching and sends to self are the MPI layer's). The module logs each
 * request it builds, so tests see in which order calls reached it; with `checkpoint`, it
 * implements the quartet and logs each phase.
 */
export function loopRpi(options: { checkpoint?: boolean } = {}) {
  const log: string[] = [];
  let host!: RpiHost;
  const notToSelf = (what: string) => () => {
    throw new Error(`loop rpi: ${what} reached the rpi; a one-process job has no peers`);
  };
  const module: RpiModule = {
    ssiApi: '1.0.0',
    type: 'rpi',
    typeApi: '2.0.0',
    name: 'loop',
    version: '1.0.0',
    query: () => ({ priority: 50, threadMin: 0, threadMax: 3 }),
    async init(_procs: Proc[], limits, h) {
      host = h;
      limits.maxTag = 65535; // modules may lower the limits
      const actions: RpiActions = {
        addprocs: async () => {},
        finalize: async () => {
          log.push('finalize');
        },
        build(req: RpiRequest) {
          log.push(`build ${req.type === ReqType.RECV ? 'recv' : 'send'} tag ${req.tag}`);
        },
        start: notToSelf('a send to another process'),
        matched: notToSelf('an unexpected message of its own'),
        advance: () => false,
        destroy: () => {},
        cancel: notToSelf('a cancel of a send to another process'),
      };
      if (options.checkpoint) {
        actions.interrupt = async () => void log.push('interrupt');
        actions.checkpoint = async () => void log.push('checkpoint');
        actions.continue = async () => void log.push('continue');
        actions.restart = async () => void log.push('restart');
      }
      return actions;
    },
  };
  return { module, log, host: () => host };
}

/** A JobRuntime for a job of one process, recording aborts instead of exiting. */
export function soloRuntime() {
  const aborts: { code: number; message: string }[] = [];
  let gathers = 0;
  const runtime: JobRuntime = {
    jobId: 'in-process',
    secret: new Uint8Array(32),
    rank: 0,
    size: 1,
    gps: { node: 0, pid: process.pid, index: 0, grank: 0 },
    host: '127.0.0.1',
    nodeName: 'here',
    control: new RankControl(
      0,
      async () => {
        throw new Error('no launcher in an in-process test');
      },
      () => {},
    ),
    allgather: async (v) => {
      gathers++;
      return [v];
    },
    oobSend: async () => {
      throw new Error('no peers');
    },
    oobRecv: () => new Promise(() => {}),
    abort: (code, message) => {
      aborts.push({ code, message });
      return new Promise<never>(() => {});
    },
    finalize: async () => {},
  };
  return { runtime, aborts, gathers: () => gathers };
}

/**
 * A one-process MPI for the tests of a file (or a describe block): `MPI.init` over the loop rpi
 * and a solo runtime before them (and `modules`, e.g. a coll module of the test), finalize after.
 * The returned function gives the `Mpi`.
 */
export function soloMpi(
  ssi: Record<string, string | number> = {},
  modules: SsiModule[] = [],
): () => Mpi {
  return soloMpiOverLoop(ssi, modules).mpi;
}

/** `soloMpi`, and the loop rpi under it (for tests that act as the rpi: `loop.host()`). */
export function soloMpiOverLoop(
  ssi: Record<string, string | number> = {},
  modules: SsiModule[] = [],
): { mpi: () => Mpi; loop: ReturnType<typeof loopRpi> } {
  const loop = loopRpi();
  const solo = soloRuntime();
  let mpi: Mpi | undefined;
  beforeAll(async () => {
    mpi = await MPI.init({
      runtime: solo.runtime,
      modules: [loop.module, ...modules],
      ssi: { rpi: 'loop', ...ssi },
      searchFrom: [],
    });
  });
  afterAll(async () => {
    if (!MPI.finalized()) await mpi?.finalize();
  });
  return { mpi: () => mpi!, loop };
}

/**
 * `soloMpi` whose MPI.init output on stderr (its verbose lines) is kept in `said` instead of
 * printed, for tests of what MPI.init says.
 */
export function soloMpiSaying(ssi: Record<string, string | number> = {}): {
  mpi: () => Mpi;
  said: string[];
} {
  const said: string[] = [];
  let mpi: Mpi | undefined;
  beforeAll(async () => {
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      said.push(String(chunk));
      return true;
    });
    try {
      mpi = await MPI.init({
        runtime: soloRuntime().runtime,
        modules: [loopRpi().module],
        ssi: { rpi: 'loop', ...ssi },
        searchFrom: [],
      });
    } finally {
      spy.mockRestore();
    }
  });
  afterAll(async () => {
    if (!MPI.finalized()) await mpi?.finalize();
  });
  return { mpi: () => mpi!, said };
}
