import { parseCpuList } from '@ssi/lam';
import {
  COLLECTIVE_CASES,
  collectivesProgram,
  explainJob,
  type JobResult,
  killAllJobs,
  launchJob,
} from '@ssi/mpi/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { cpuCount, cpuSet } from '../src/crowding';
import { layout } from './helpers/layout';

/**
 * The test matrix of Ch. 6.4 with `--ssi coll smp`, in real processes: 1, 2^N and 2^N + X ranks
 * on node layouts where smp serves COMM_WORLD (2+1, 2+2, 2+2+1, 4+1, 2+2+2, 3+3+2) and where it
 * declines (all on one node, one per node), over tcp and over sm. The program
 * (fixtures/smp-matrix.mjs) checks every result against independently computed values and runs
 * the matrix again on one-node communicators (smp declines) and on a split by parity.
 */
afterEach(() => killAllJobs());

const program = new URL('./fixtures/smp-matrix.mjs', import.meta.url).pathname;

const run = (perNode: number[], rpi: string, mode: 'full' | 'quick', ssi = {}) => {
  const l = layout(perNode);
  return launchJob({
    np: l.np,
    rankEnv: l.rankEnv,
    program,
    args: [mode],
    ssi: { rpi, coll: 'smp', coll_verbose: 20, ...ssi },
    timeoutMs: 300_000,
    label: `smp matrix on ${l.name} over ${rpi}`,
  });
};

/** Which module each named communicator got, from coll_verbose (rank 0's lines). */
function served(r: JobResult, name: string): string | undefined {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = r.output.match(
    new RegExp(`\\[0!?\\] .*?${escaped}: (?:coll module|selected coll module) (\\w+)`),
  );
  return m?.[1];
}

describe('smp serves communicators that span nodes with a shared node', () => {
  it.each([
    [[2, 1], 'tcp', 'full'],
    [[2, 2], 'sm', 'full'],
    [[2, 2, 1], 'tcp', 'full'],
    [[4, 1], 'sm', 'full'],
    [[2, 2, 2], 'sm', 'quick'],
    [[3, 3, 2], 'tcp', 'full'],
    [[3, 3, 2], 'sm', 'quick'],
  ] as const)('layout %j over %s (%s)', async (perNode, rpi, mode) => {
    const r = await run([...perNode], rpi, mode);
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output).toContain('smp matrix ok');
    expect(served(r, 'COMM_WORLD'), 'smp serves the world').toBe('smp');
    expect(r.output).toMatch(/COMM_WORLD: smp hierarchy: nodes/);
    // buffers from coll_smp_shm_min_bytes on move through a shared area on each node, bcast
    // readers copying straight out of the writer's memory
    expect(r.output).toMatch(
      /COMM_WORLD: smp: node \d shares an area of \d+ bytes \(pieces of \d+, bcast by single copy\)/,
    );
    // one-node halves: smp declines, lam_basic (the last candidate) serves them
    expect(served(r, 'node 0'), explainJob(r)).toBe('lam_basic');
    expect(r.output).toMatch(/smp: all \d ranks are on one node/);
    expect(served(r, 'interleaved'), 'smp serves the reordered world').toBe('smp');
  });
});

describe('smp options', () => {
  it('bcast in segments (levels overlapping) on 2+2+1 over sm and 3+3+2 over tcp', async () => {
    for (const [perNode, rpi] of [
      [[2, 2, 1], 'sm'],
      [[3, 3, 2], 'tcp'],
    ] as const) {
      const r = await run([...perNode], rpi, 'full', { coll_smp_bcast_segment_bytes: 100_000 });
      expect(r.ok, explainJob(r)).toBe(true);
      expect(served(r, 'COMM_WORLD')).toBe('smp');
    }
  });

  it('the shared area in many small pieces (its ring and both sets reused within a call)', async () => {
    for (const [perNode, rpi, singleCopy] of [
      [[2, 2, 1], 'sm', 1],
      [[3, 3, 2], 'tcp', 0],
      [[4, 1], 'sm', 0],
    ] as const) {
      const r = await run([...perNode], rpi, 'full', {
        coll_smp_shm_chunk_bytes: 262144,
        coll_smp_shm_min_bytes: 4096,
        coll_smp_shm_single_copy: singleCopy,
      });
      expect(r.ok, explainJob(r)).toBe(true);
      expect(r.output).toMatch(
        /COMM_WORLD: smp: node \d shares an area of \d+ bytes \(pieces of 262144\)/,
      );
    }
  });

  it('striped bcast (coll_smp_bcast_stripe_min_bytes) where every node holds as many ranks, not elsewhere', async () => {
    // 8000-byte and larger bcasts go striped (k stripes, node rank j to node rank j), from
    // every root; 3+3 cuts three stripes, 2+2+2 passes them on down the tree of the nodes.
    const striped = { coll_smp_bcast_stripe_min_bytes: 4096, coll_smp_shm_min_bytes: 4096 };
    for (const [perNode, rpi, mode] of [
      [[2, 2], 'sm', 'full'],
      [[3, 3], 'tcp', 'quick'],
      [[2, 2, 2], 'sm', 'quick'],
    ] as const) {
      const r = await run([...perNode], rpi, mode, striped);
      expect(r.ok, explainJob(r)).toBe(true);
      expect(r.output).toMatch(
        /COMM_WORLD: smp: node \d shares an area of \d+ bytes \(pieces of \d+, bcast by single copy, striped between nodes\)/,
      );
    }
    // 2 + 1: the nodes hold different numbers of ranks, so nobody stripes.
    const r = await run([2, 1], 'tcp', 'quick', striped);
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output).toMatch(/COMM_WORLD: smp: node \d shares an area/);
    expect(r.output).not.toMatch(/striped between nodes/);
  });

  it('2 + 2 bound in blocks of two ranks per CPU (a node with fewer CPUs than ranks): small collectives by the levels', async () => {
    const l = layout([2, 2]);
    const r = await launchJob({
      np: l.np,
      rankEnv: l.rankEnv,
      program,
      args: ['full'],
      // 2 CPUs per rank (blocks) where this machine has fewer than 4: the ranks share them
      bind: 'core',
      bindOversubscribed: 4,
      ssi: { rpi: 'sm', coll: 'smp', coll_verbose: 20 },
      timeoutMs: 300_000,
      label: `smp matrix on ${l.name} bound in blocks`,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output).toContain('smp matrix ok');
    // node 0 is ranks 0-1, node 1 ranks 2-3: crowded where both are bound to one CPU between them
    const cpusOf = (rank: number) => {
      const cpus = r.bindings?.[rank]?.cpus;
      return cpus === undefined ? null : cpuSet(parseCpuList(cpus));
    };
    const crowdedNode = (a: number, b: number) => {
      const [x, y] = [cpusOf(a), cpusOf(b)];
      return x !== null && y !== null && cpuCount(x.map((w, i) => w | y[i]!)) < 2;
    };
    const crowded = crowdedNode(0, 1) || crowdedNode(2, 3);
    expect(r.output.includes('small collectives by the levels'), JSON.stringify(r.bindings)).toBe(
      crowded,
    );
  });

  it('coll_smp_shm 0: the sub-communicators move the data, still correct', async () => {
    const r = await run([2, 2], 'sm', 'full', { coll_smp_shm: 0 });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output).not.toMatch(/shares an area/);
  });

  it('coll_smp_associative 0 (reductions to lam_basic) and bcasts whole up to 1 MiB, still correct', async () => {
    const r = await run([2, 2], 'tcp', 'quick', {
      coll_smp_associative: 0,
      coll_smp_bcast_min_bytes: 1 << 20,
    });
    expect(r.ok, explainJob(r)).toBe(true);
  });

  it("an error inside a level reaches the caller under the parent's handler, no abort", async () => {
    const r = await launchJob({
      ...(({ np, rankEnv }) => ({ np, rankEnv }))(layout([2, 2])),
      program,
      args: ['errors'],
      ssi: { rpi: 'tcp', coll: 'smp', coll_base_timeout: 3 },
      timeoutMs: 120_000,
      label: 'smp errors on 2+2',
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output.match(/errors ok at rank \d/g)).toHaveLength(4);
    expect(r.output).toMatch(/errors ok at rank 2: ERR_TRUNCATE/);
  });

  it('a bad parameter value stops the job naming it', async () => {
    const r = await run([2, 1], 'tcp', 'quick', { coll_smp_associative: 2 });
    expect(r.ok).toBe(false);
    expect(r.output).toContain('coll_smp_associative is 2; expected 0 or 1');
  });
});

describe('smp declines where a hierarchy gains nothing; lam_basic serves', () => {
  it.each([
    [[1], 'all 1 ranks are on one node'],
    [[1, 1], 'one rank per node (2 nodes)'],
    [[2], 'all 2 ranks are on one node'],
    [[4], 'all 4 ranks are on one node'],
    [[1, 1, 1, 1], 'one rank per node (4 nodes)'],
  ] as const)('layout %j', async (perNode, reason) => {
    const r = await run([...perNode], 'tcp', 'quick');
    expect(r.ok, explainJob(r)).toBe(true);
    expect(served(r, 'COMM_WORLD')).toBe('lam_basic');
    expect(r.output).toContain(`smp: ${reason}`);
  });
});

describe('the collectives suite of @ssi/mpi with smp (lam_basic fills in the rest)', () => {
  it('every case on 2+2+1 over sm, then bad input (errors where the mistake is, nobody hangs)', async () => {
    const l = layout([2, 2, 1]);
    const cases = COLLECTIVE_CASES.filter((c) => c !== 'bad-input');
    const common = {
      np: l.np,
      rankEnv: l.rankEnv,
      program: collectivesProgram,
      timeoutMs: 300_000,
    };
    const r = await launchJob({
      ...common,
      args: cases,
      ssi: { rpi: 'sm', coll: 'smp', coll_verbose: 10 },
      label: 'collectives suite with smp on 2+2+1',
    });
    expect(r.ok, explainJob(r)).toBe(true);
    for (const c of cases) expect(r.output).toContain(`case ${c} ok`);
    expect(served(r, 'COMM_WORLD')).toBe('smp');
    const bad = await launchJob({
      ...common,
      args: ['bad-input'],
      ssi: { rpi: 'tcp', coll: 'smp', coll_base_timeout: 3 },
      label: 'bad input with smp on 2+2+1',
    });
    expect(bad.ok, explainJob(bad)).toBe(true);
  });
});
