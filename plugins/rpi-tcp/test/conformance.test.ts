import {
  CONFORMANCE_CASES,
  conformanceProgram,
  type JobResult,
  killAllJobs,
  launchJob,
} from '@ssi/mpi/testing';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * The point-to-point conformance suite of Ch. 5.3.1 over the tcp module, in real processes on
 * one node: every case on 2, 3, 4 and 8 ranks (the stress case: 100k checksummed messages).
 */
afterEach(() => killAllJobs());

function casesFor(np: number): string[] {
  return CONFORMANCE_CASES.filter((c) => np >= c.minRanks).map((c) => c.name);
}

function explain(r: JobResult): string {
  return `${r.failure ?? ''}\n--- output ---\n${r.output.slice(-4000)}`;
}

describe('tcp rpi: conformance on one node', () => {
  it.each([2, 3, 4, 8])('passes every case on %i ranks', async (np) => {
    const r = await launchJob({
      np,
      program: conformanceProgram,
      args: casesFor(np),
      ssi: { rpi: 'tcp' },
      timeoutMs: 240_000,
      label: `conformance on ${np} ranks`,
    });
    expect(r.ok, explain(r)).toBe(true);
    expect(r.finalized).toEqual(new Array(np).fill(true));
  });

  // (Not `cancel`: it relies on a 10-element standard send completing eagerly.)
  it('with a 16-byte eager limit, nearly every message takes the rendezvous protocol', async () => {
    const r = await launchJob({
      np: 2,
      program: conformanceProgram,
      args: ['modes', 'objects', 'unexpected', 'probe', 'persistent', 'sizes', 'stress'],
      ssi: { rpi: 'tcp', rpi_tcp_short: 16 },
      timeoutMs: 120_000,
    });
    expect(r.ok, explain(r)).toBe(true);
  });
});

describe('tcp rpi: conformance across node addresses', () => {
  it('passes every case with 5 ranks on three node addresses (2+2+1)', async () => {
    const r = await launchJob({
      np: 5,
      nodes: ['127.0.0.2', '127.0.0.3', '127.0.0.4'],
      program: conformanceProgram,
      args: casesFor(5),
      ssi: { rpi: 'tcp' },
      timeoutMs: 240_000,
    });
    expect(r.ok, explain(r)).toBe(true);
  });
});
