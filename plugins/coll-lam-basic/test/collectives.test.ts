import {
  COLLECTIVE_CASES,
  collectivesProgram,
  explainJob,
  killAllJobs,
  launchJob,
} from '@ssi/mpi/testing';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * The test matrix of Ch. 6.3.1 for lam_basic through the whole stack (user API, coll framework,
 * this module, tcp): every collective checked on its output against independently computed
 * values, on 1, 2^N and 2^N+X processes, linear (below coll_crossover) and binomial algorithms,
 * zero-length to 4 MB buffers, every kind of root, in-place variants, communicators made by
 * dup/split/create, intercommunicators, and bad input.
 */
afterEach(() => killAllJobs());

/** Every case but bad-input, which needs a short coll_base_timeout of its own (below). */
const MATRIX = COLLECTIVE_CASES.filter((c) => c !== 'bad-input');

const run = (np: number, ssi: Record<string, string | number> = {}, cases: string[] = MATRIX) =>
  launchJob({
    np,
    program: collectivesProgram,
    args: cases,
    ssi: { rpi: 'tcp', coll: 'lam_basic', ...ssi },
    timeoutMs: 300_000,
    label: `collectives on ${np} ranks`,
  });

describe('lam_basic: every collective on one node', () => {
  it.each([1, 2, 3, 4, 5, 8])('%i ranks', async (np) => {
    const r = await run(np);
    expect(r.ok, explainJob(r)).toBe(true);
    for (const c of MATRIX) expect(r.output).toContain(`case ${c} ok`);
  });

  it.each([1, 2, 5])(
    'bad input on %i ranks: errors where the mistake is, nobody hangs',
    async (np) => {
      // A short collective timeout: the case shows that nobody waits past it.
      const r = await run(np, { coll_base_timeout: 3 }, ['bad-input']);
      expect(r.ok, explainJob(r)).toBe(true);
      expect(r.output).toContain('case bad-input ok');
    },
  );

  it('binomial trees everywhere (coll_crossover 1) and linear everywhere (1000) agree', async () => {
    for (const crossover of [1, 1000]) {
      const r = await run(5, { coll_crossover: crossover, coll_reduce_crossover: crossover }, [
        'barrier',
        'bcast',
        'gather',
        'allgather',
        'reduce',
        'scan',
      ]);
      expect(r.ok, explainJob(r)).toBe(true);
    }
  });
});

describe('lam_basic across node addresses, uneven ranks per node', () => {
  it('6 ranks on three node addresses (2+2+2) and 5 ranks (2+2+1)', async () => {
    for (const np of [6, 5]) {
      const r = await launchJob({
        np,
        nodes: ['127.0.0.2', '127.0.0.3', '127.0.0.4'],
        program: collectivesProgram,
        args: MATRIX,
        ssi: { rpi: 'tcp' },
        timeoutMs: 300_000,
      });
      expect(r.ok, explainJob(r)).toBe(true);
    }
  });
});

describe('the coll framework around a partial, hierarchical module', () => {
  it('missing functions fall back to lam_basic; init may build sub-communicators', async () => {
    const program = new URL('./fixtures/partial-module.mjs', import.meta.url).pathname;
    for (const np of [1, 4]) {
      const r = await launchJob({ np, program, ssi: { rpi: 'tcp' }, timeoutMs: 120_000 });
      expect(r.ok, explainJob(r)).toBe(true);
      expect(r.output).toContain('partial module ok');
    }
  });

  it('--ssi coll with a module that is not installed lists what is', async () => {
    const r = await run(2, { coll: 'magpie' }, ['barrier']);
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/coll.*magpie/);
    expect(r.output).toMatch(/lam_basic/);
  });
});
