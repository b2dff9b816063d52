import { join } from 'node:path';
import { killAllJobs, launchJob } from '@ssi/mpi/testing';
import { afterEach, describe, expect, it } from 'vitest';

afterEach(() => killAllJobs());

describe('crtcp: the quartet out of order', () => {
  it('each wrong call is refused saying what comes first, and the job goes on', async () => {
    const r = await launchJob({
      np: 3,
      program: join(import.meta.dirname, 'fixtures', 'phases-job.mjs'),
      ssi: { rpi: 'crtcp' },
      timeoutMs: 60_000,
    });
    expect(r.ok, `${r.failure ?? ''}\n${r.output.slice(-3000)}`).toBe(true);
    expect(r.output.match(/PHASES OK rank \d/g)).toHaveLength(3);
    expect(r.output.match(/refused /g)).toHaveLength(3 * 4);
  });

  it('tcp has no quartet: the hooks say so and name crtcp', async () => {
    const r = await launchJob({
      np: 2,
      program: join(import.meta.dirname, 'fixtures', 'phases-job.mjs'),
      ssi: { rpi: 'tcp' },
      timeoutMs: 60_000,
    });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/does not support checkpoint\/restart .*--ssi rpi crtcp/);
  });
});
