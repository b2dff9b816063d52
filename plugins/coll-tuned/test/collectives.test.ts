import {
  COLLECTIVE_CASES,
  collectivesProgram,
  explainJob,
  type JobResult,
  killAllJobs,
  launchJob,
} from '@ssi/mpi/testing';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * The collectives matrix of Ch. 6.3.1 with `--ssi coll tuned`, through the whole stack (user API,
 * coll framework, this module with lam_basic filling in what it leaves out, tcp): every
 * collective checked on its output against independently computed values, on 1, 2^N and 2^N+X
 * processes, 0 B to 4 MiB, every kind of root, in place, non-commutative user operators, on one
 * node and across node addresses. Each rank prints which module serves its world (coll_verbose)
 * so a run that silently fell back to lam_basic fails here.
 */
afterEach(() => killAllJobs());

const MATRIX = COLLECTIVE_CASES.filter((c) => c !== 'bad-input');

const run = (
  np: number,
  ssi: Record<string, string | number> = {},
  cases: readonly string[] = MATRIX,
  nodes?: string[],
) =>
  launchJob({
    np,
    nodes,
    program: collectivesProgram,
    args: cases,
    ssi: { rpi: 'tcp', coll: 'tuned', coll_verbose: 20, ...ssi },
    timeoutMs: 400_000,
    label: `collectives on ${np} ranks with tuned`,
  });

function expectTunedRun(r: JobResult, cases: readonly string[]): void {
  expect(r.ok, explainJob(r)).toBe(true);
  for (const c of cases) expect(r.output).toContain(`case ${c} ok`);
  expect(r.output, 'tuned serves COMM_WORLD').toMatch(/COMM_WORLD: tuned algorithms/);
}

describe('tuned: every collective on one node', () => {
  it.each([1, 2, 3, 4, 5, 8])('%i ranks', async (np) => {
    expectTunedRun(await run(np), MATRIX);
  });

  it('bad input on 3 ranks: errors where the mistake is, nobody hangs', async () => {
    const r = await run(3, { coll_base_timeout: 3 }, ['bad-input']);
    expect(r.ok, explainJob(r)).toBe(true);
  });
});

describe('tuned: every algorithm forced by its parameter, with thresholds that switch inside the matrix', () => {
  const cases = ['barrier', 'bcast', 'allgather', 'alltoall', 'reduce', 'scan', 'comms'];
  it('dissemination, scatter_allgather, rabenseifner, recursive_doubling allgather, linear alltoall, recursive_halving reduce-scatter on 4', async () => {
    const r = await run(
      4,
      {
        coll_tuned_barrier_algorithm: 'dissemination',
        coll_tuned_bcast_algorithm: 'scatter_allgather',
        coll_tuned_allreduce_algorithm: 'rabenseifner',
        coll_tuned_allgather_algorithm: 'recursive_doubling',
        coll_tuned_alltoall_algorithm: 'linear',
        coll_tuned_reduce_scatter_algorithm: 'recursive_halving',
      },
      cases,
    );
    expectTunedRun(r, cases);
  });

  it('recursive_doubling barrier, chain bcast, ring allreduce, reduce and allgather, pairwise alltoall, ring reduce-scatter, linear scan on 5', async () => {
    const r = await run(
      5,
      {
        coll_tuned_barrier_algorithm: 'recursive_doubling',
        coll_tuned_bcast_algorithm: 'chain',
        coll_tuned_bcast_segment_bytes: 1000,
        coll_tuned_allreduce_algorithm: 'ring',
        // The ring reduce: the ring allreduce's association, so both give the same bits.
        coll_tuned_reduce_algorithm: 'ring',
        coll_tuned_allgather_algorithm: 'ring',
        coll_tuned_alltoall_algorithm: 'pairwise',
        coll_tuned_reduce_scatter_algorithm: 'ring',
        coll_tuned_scan_algorithm: 'linear',
      },
      cases,
    );
    expectTunedRun(r, cases);
  });

  it('tree barrier, reduce_bcast allreduce, bruck allgather and alltoall, recursive_doubling reduce-scatter and scan on 6', async () => {
    const r = await run(
      6,
      {
        coll_tuned_barrier_algorithm: 'tree',
        coll_tuned_allreduce_algorithm: 'reduce_bcast',
        coll_tuned_allgather_algorithm: 'bruck',
        coll_tuned_alltoall_algorithm: 'bruck',
        coll_tuned_reduce_scatter_algorithm: 'recursive_doubling',
        coll_tuned_scan_algorithm: 'recursive_doubling',
      },
      cases,
    );
    expectTunedRun(r, cases);
  });

  it('a bad algorithm name stops MPI.init with the parameter, the value and the choices', async () => {
    const r = await run(2, { coll_tuned_bcast_algorithm: 'fastest' }, ['barrier']);
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(
      /coll_tuned_bcast_algorithm is "fastest"; expected one of auto, binomial, scatter_allgather, chain/,
    );
  });
});

describe('tuned across node addresses, uneven ranks per node', () => {
  it('6 ranks on three node addresses (2+2+2) and 5 ranks (2+2+1)', async () => {
    for (const np of [6, 5]) {
      expectTunedRun(await run(np, {}, MATRIX, ['127.0.0.2', '127.0.0.3', '127.0.0.4']), MATRIX);
    }
  });
});

describe('tuned over the sm rpi', () => {
  it('every collective on 5 ranks with --ssi rpi sm', async () => {
    expectTunedRun(await run(5, { rpi: 'sm' }), MATRIX);
  });
});

describe("tuned under smp: the module of the hierarchy's levels", () => {
  /** Which module coll_verbose says serves the communicator whose name ends in `name`. */
  const servedBy = (r: JobResult, name: string) => {
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const found = r.output.match(
      new RegExp(`${escaped}: (?:coll module|selected coll module) (\\w+)`),
    );
    return found?.[1];
  };

  it('--ssi coll smp,tuned with smp preferred, 2+2 ranks on two nodes: tuned serves every level it is asked for', async () => {
    const r = await run(4, { coll: 'smp,tuned', coll_smp_priority: 50, coll_verbose: 20 }, MATRIX, [
      '127.0.0.2',
      '127.0.0.3',
    ]);
    expect(r.ok, explainJob(r)).toBe(true);
    for (const c of MATRIX) expect(r.output).toContain(`case ${c} ok`);
    expect(servedBy(r, 'COMM_WORLD'), explainJob(r)).toBe('smp');
    expect(servedBy(r, 'COMM_WORLD [smp node 0]'), explainJob(r)).toBe('tuned');
    expect(servedBy(r, 'COMM_WORLD [smp node 1]'), explainJob(r)).toBe('tuned');
    // On two nodes smp's leader level runs point to point on the parent (its length exchange and
    // bcast pieces): the leaders' communicator may get no collective, so no module is selected
    // for it (selection is on first use). When one is, it is tuned.
    expect([undefined, 'tuned'], explainJob(r)).toContain(servedBy(r, 'COMM_WORLD [smp leaders]'));
    expect(servedBy(r, 'COMM_WORLD [smp flat]'), explainJob(r)).toBe('tuned');
  });
});
