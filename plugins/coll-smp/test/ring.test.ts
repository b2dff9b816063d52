import { explainJob, killAllJobs, launchJob } from '@ssi/mpi/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { layout } from './helpers/layout';

/**
 * The bcast ring of another node's area when one of that node's readers is late
 * (fixtures/smp-late-reader.mjs): the node's leader runs ahead, and must not receive a later
 * call's data into a slot the late reader has not copied out of yet.
 */
afterEach(() => killAllJobs());

const program = new URL('./fixtures/smp-late-reader.mjs', import.meta.url).pathname;

describe("another node's leader reuses a ring slot only after its readers are done with it", () => {
  it.each([
    [[2, 2], 'sm'],
    [[2, 3], 'tcp'],
  ] as const)('layout %j over %s', async (perNode, rpi) => {
    const l = layout(perNode);
    const r = await launchJob({
      np: l.np,
      rankEnv: l.rankEnv,
      program,
      ssi: { rpi, coll: 'smp', coll_verbose: 10 },
      timeoutMs: 120_000,
      label: `smp late reader on ${l.name} over ${rpi}`,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output.match(/late reader ok at rank \d/g)).toHaveLength(l.np);
    // the calls of 100 000 bytes go through the area (in a ring of 4 MiB pieces: two slots)
    expect(r.output).toMatch(/smp: node 1 shares an area of \d+ bytes \(pieces of 4194304/);
  });
});
