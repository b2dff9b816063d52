import { CONFORMANCE_CASES, conformanceProgram, killAllJobs, launchJob } from '@ssi/mpi/testing';
import { afterEach, expect, it } from 'vitest';

afterEach(() => killAllJobs());
it('smoke', async () => {
  const r = await launchJob({
    np: 2,
    program: conformanceProgram,
    args: CONFORMANCE_CASES.filter((c) => c.minRanks <= 2).map((c) => c.name),
    ssi: { rpi: 'sm', rpi_verbose: 10 },
    timeoutMs: 120_000,
  });
  console.log(r.output.slice(-3000));
  expect(r.ok, r.failure).toBe(true);
});
