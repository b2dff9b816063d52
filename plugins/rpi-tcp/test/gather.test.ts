import {
  DATATYPE_CASES,
  datatypesProgram,
  explainJob,
  killAllJobs,
  launchJob,
} from '@ssi/mpi/testing';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * The gather path (issue 20): a non-contiguous send leaves tcp as one writev of the ranges of the
 * user's buffer instead of a packed copy. The receiver cannot tell (the fixture checks every byte
 * against the packed form); the finalize report of `rpi_verbose 10` says how many sends were
 * gathered from how many ranges, which proves the path was (or was not) taken.
 */
afterEach(() => killAllJobs());

const fixture = new URL('./fixtures/gather-sends.mjs', import.meta.url).pathname;

/** Each rank's "sends gathered N from M ranges", by rank. */
function gathered(output: string): Record<string, [number, number]> {
  const found = [
    ...output.matchAll(/rank (\d) body bytes read .*sends gathered (\d+) from (\d+) ranges/g),
  ];
  return Object.fromEntries(found.map((m) => [m[1]!, [Number(m[2]), Number(m[3])]]));
}

describe('tcp rpi: non-contiguous sends gathered from the user buffer', () => {
  it.each([
    // the defaults gather only ranges of 64 KiB and more: none of these
    ['defaults', {}, [0, 0]],
    // A, D twice, E: 4 sends of 64 ranges; B (32 KiB) and C (8-byte ranges) are packed
    [
      'thresholds 64 KiB / 2 KiB',
      { rpi_tcp_gather_min: 65536, rpi_tcp_gather_range: 2048 },
      [4, 4 * 64],
    ],
    // everything over rpi_tcp_copy_limit: B's 8 ranges and C's 65536 too
    [
      'thresholds at their minimum',
      { rpi_tcp_gather_min: 0, rpi_tcp_gather_range: 1 },
      [6, 4 * 64 + 8 + 65536],
    ],
    ['rpi_tcp_gather 0', { rpi_tcp_gather: 0 }, [0, 0]],
  ] as const)('%s', async (_name, params, want) => {
    const r = await launchJob({
      np: 2,
      program: fixture,
      ssi: { rpi: 'tcp', rpi_verbose: 10, ...params },
      timeoutMs: 60_000,
      label: `gather-sends (${_name})`,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output).toContain('gather-sends ok');
    expect(gathered(r.output)).toEqual({ '0': want, '1': [0, 0] });
  });
});

describe('the datatype suite over tcp with every non-contiguous send gathered, and with none', () => {
  it.each([
    ['gathered', { rpi_tcp_gather_min: 0, rpi_tcp_gather_range: 1 }],
    ['packed', { rpi_tcp_gather: 0 }],
  ] as const)('%s, on 3 ranks', async (name, params) => {
    const r = await launchJob({
      np: 3,
      program: datatypesProgram,
      args: [...DATATYPE_CASES],
      ssi: { rpi: 'tcp', coll: 'lam_basic', rpi_verbose: 10, ...params },
      timeoutMs: 180_000,
      label: `datatypes ${name}`,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    for (const c of DATATYPE_CASES) expect(r.output).toContain(`case ${c} ok`);
    const sends = Object.values(gathered(r.output)).map(([n]) => n);
    expect(sends).toHaveLength(3);
    const total = sends.reduce((a, b) => a + b, 0);
    if (name === 'gathered') expect(total).toBeGreaterThan(0);
    else expect(total).toBe(0);
  });
});
