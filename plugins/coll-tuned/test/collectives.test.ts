import {
  COLLECTIVE_CASES,
  collectivesProgram,
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

function explain(r: JobResult): string {
  return `${r.failure ?? ''}\n--- output ---\n${r.output.slice(-4000)}`;
}

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
  expect(r.ok, explain(r)).toBe(true);
  for (const c of cases) expect(r.output).toContain(`case ${c} ok`);
  expect(r.output, 'tuned serves COMM_WORLD').toMatch(/COMM_WORLD: tuned algorithms/);
}

describe('tuned: every collective on one node', () => {
  it.each([1, 2, 3, 4, 5, 8])('%i ranks', async (np) => {
    expectTunedRun(await run(np), MATRIX);
  });

  it('bad input on 3 ranks: errors where the mistake is, nobody hangs', async () => {
    const r = await run(3, { coll_base_timeout: 3 }, ['bad-input']);
    expect(r.ok, explain(r)).toBe(true);
  });
});

describe('tuned: every algorithm forced by its parameter, with thresholds that switch inside the matrix', () => {
  const cases = ['barrier', 'bcast', 'allgather', 'alltoall', 'reduce', 'comms'];
  it('dissemination, scatter_allgather, rabenseifner, recursive_doubling allgather, linear alltoall on 4', async () => {
    const r = await run(
      4,
      {
        coll_tuned_barrier_algorithm: 'dissemination',
        coll_tuned_bcast_algorithm: 'scatter_allgather',
        coll_tuned_allreduce_algorithm: 'rabenseifner',
        coll_tuned_allgather_algorithm: 'recursive_doubling',
        coll_tuned_alltoall_algorithm: 'linear',
      },
      cases,
    );
    expectTunedRun(r, cases);
  });

  it('recursive_doubling barrier, chain bcast, ring allreduce and allgather, pairwise alltoall on 5', async () => {
    const r = await run(
      5,
      {
        coll_tuned_barrier_algorithm: 'recursive_doubling',
        coll_tuned_bcast_algorithm: 'chain',
        coll_tuned_bcast_segment_bytes: 1000,
        coll_tuned_allreduce_algorithm: 'ring',
        coll_tuned_allgather_algorithm: 'ring',
        coll_tuned_alltoall_algorithm: 'pairwise',
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
