import { conformanceCasesFor, conformanceProgram, killAllJobs, launchJob } from '@ssi/mpi/testing';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * crtcp is tcp when no checkpoint is taken: the point-to-point conformance suite of Ch. 5.3.1
 * passes over it, in real processes, on 2, 3 and 4 ranks and with a tiny eager limit (nearly
 * every message by rendezvous or on a credit).
 */
afterEach(() => killAllJobs());

describe('crtcp: the conformance suite', () => {
  it.each([2, 3, 4])('passes every case on %i ranks', async (np) => {
    const r = await launchJob({
      np,
      program: conformanceProgram,
      args: conformanceCasesFor(np),
      ssi: { rpi: 'crtcp', rpi_verbose: 10 },
      timeoutMs: 240_000,
      label: `conformance over crtcp on ${np} ranks`,
    });
    expect(r.ok, `${r.failure ?? ''}\n${r.output.slice(-4000)}`).toBe(true);
    expect(r.finalized).toEqual(new Array(np).fill(true));
    // It really ran over crtcp (and through tcp's transport underneath).
    expect(r.output).toMatch(/selected rpi module crtcp/);
    expect(r.output).toMatch(/tcp: rank 0 connected to \d+ peers/);
  });

  it('passes with a 16-byte eager limit (rendezvous and credits everywhere)', async () => {
    const r = await launchJob({
      np: 2,
      program: conformanceProgram,
      args: [
        'modes',
        'objects',
        'unexpected',
        'probe',
        'preposted',
        'persistent',
        'sizes',
        'stress',
      ],
      ssi: { rpi: 'crtcp', rpi_tcp_short: 16 },
      timeoutMs: 120_000,
    });
    expect(r.ok, `${r.failure ?? ''}\n${r.output.slice(-4000)}`).toBe(true);
  });
});
