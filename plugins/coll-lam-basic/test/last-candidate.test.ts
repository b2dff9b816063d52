import { explainJob, killAllJobs, launchJob } from '@ssi/mpi/testing';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * lam_basic as the last coll candidate on real processes: a hierarchical module written on
 * CollComm alone (fixtures/hierarchy-module.mjs), selected with `--ssi coll nodewise` and nothing
 * else, on ranks placed on three node addresses (2+2+1). It serves the communicators that span
 * nodes; lam_basic serves COMM_SELF, one-node communicators and nodewise's own sub-communicators.
 */
afterEach(() => killAllJobs());

const program = new URL('./fixtures/hierarchy-module.mjs', import.meta.url).pathname;
const NODES = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];

const run = (mode: string, coll: string, extra: Record<string, string | number> = {}) =>
  launchJob({
    np: 5,
    nodes: NODES,
    program,
    args: [mode],
    ssi: { rpi: 'tcp', coll, ...extra },
    timeoutMs: 120_000,
    label: `hierarchy module, ${mode}, --ssi coll ${coll}`,
  });

describe('--ssi coll <a specialised module> alone', () => {
  it('works on every communicator: the module where it accepts, lam_basic where it declines', async () => {
    const r = await run('run', 'nodewise', { coll_verbose: 0 });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output).toContain('hierarchy module ok');
    // Node locality as the launcher placed the ranks: blocks of two on three nodes.
    const nodes = 'nodes [[0,1],[2,3],[4]]';
    expect(r.output).toContain(
      `[0] locality of COMM_WORLD at rank 0: ${nodes} node 0 local [0,1] leader true`,
    );
    expect(r.output).toContain(
      `[3] locality of COMM_WORLD at rank 3: ${nodes} node 1 local [2,3] leader false`,
    );
    expect(r.output).toContain(
      `[4] locality of COMM_WORLD at rank 4: ${nodes} node 2 local [4] leader true`,
    );
    // World ranks 0, 2, 4 (parity 0) sit on three different nodes; 1 and 3 on two.
    expect(r.output).toContain(
      '[2] locality of parity 0 at rank 1: nodes [[0],[1],[2]] node 1 local [1] leader true',
    );
    expect(r.output).toContain(
      '[3] locality of parity 1 at rank 1: nodes [[0],[1]] node 1 local [1] leader true',
    );
    // coll_verbose says why lam_basic serves COMM_SELF.
    expect(r.output).toMatch(
      /COMM_SELF: selected coll module lam_basic as the last candidate: every module --ssi coll nodewise allows declined \(nodewise: one node: a hierarchy gains nothing\)/,
    );
  });

  it('--ssi coll ^lam_basic: no last candidate, no filling in, and errors that say so', async () => {
    // Every installed module but lam_basic and tuned (which would serve what nodewise declines).
    const r = await run('no-fallback', '^lam_basic,tuned');
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output).toContain('no fallback ok');
  });
});
