import { explainJob, killAllJobs, launchJob } from '@ssi/mpi/testing';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * The scatter path (issue 20): a derived-type receive is read into the user's layout as its
 * bytes arrive (chunks unpacked in place, long runs read into directly), with no staging copy of
 * the message. The fixture checks every byte of the receive memory against `MPI.unpack` of the
 * same bytes, with read buffers small enough that reads end inside elements and blocks; the
 * finalize report of `rpi_verbose 10` says how many receives tcp scattered, which proves the
 * path was (or was not) taken.
 */
afterEach(() => killAllJobs());

const fixture = new URL('./fixtures/scatter-recvs.mjs', import.meta.url).pathname;

/** Each rank's "receives scattered N", by rank. */
function scattered(output: string): Record<string, number> {
  const found = [...output.matchAll(/rank (\d) body bytes read .*receives scattered (\d+)/g)];
  return Object.fromEntries(found.map((m) => [m[1]!, Number(m[2])]));
}

describe('tcp rpi: non-contiguous receives scattered into the user layout', () => {
  it.each([
    ['4 KiB reads (reads end inside elements)', { rpi_tcp_read_buffer: 4096 }, true],
    ['default reads', {}, true],
    ['eager up to 1 MiB, no credits', { rpi_tcp_short: 1 << 21, rpi_tcp_credits: 0 }, true],
    ['rpi_tcp_scatter 0 (staged)', { rpi_tcp_scatter: 0 }, false],
  ] as const)('%s', { timeout: 120_000 }, async (name, params, on) => {
    const r = await launchJob({
      np: 2,
      program: fixture,
      ssi: { rpi: 'tcp', coll: 'lam_basic', rpi_verbose: 10, ...params },
      timeoutMs: 90_000,
      label: `scatter-recvs (${name})`,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output).toContain('scatter-recvs ok');
    const counts = scattered(r.output);
    expect(Object.keys(counts).sort()).toEqual(['0', '1']);
    expect(counts['0']).toBe(0);
    // Every receive of the fixture whose body comes through tcp (not the cancelled ones).
    if (on) expect(counts['1']).toBeGreaterThan(40);
    else expect(counts['1']).toBe(0);
  });
});
