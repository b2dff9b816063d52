import { availableParallelism } from 'node:os';
import {
  COLLECTIVE_CASES,
  collectivesProgram,
  conformanceCasesFor,
  conformanceProgram,
  explainJob,
  killAllJobs,
  launchJob,
} from '@ssi/mpi/testing';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * The point-to-point conformance suite (Ch. 5.3.1) and the collectives matrix over the sm rpi,
 * in real processes: on one node (shared memory only, no socket), and on three node addresses
 * with 2+2+1 ranks (shared memory on-node, tcp between nodes, ANY_SOURCE across both).
 */
afterEach(() => killAllJobs());

/** `sm: rank R: L ranks on this node, E elsewhere; wait MODE (...)` lines (rpi_verbose 10). */
function layout(output: string): { rank: number; local: number; remote: number; wait: string }[] {
  return [
    ...output.matchAll(/sm: rank (\d+): (\d+) ranks on this node, (\d+) elsewhere; wait (\w+)/g),
  ]
    .map((m) => ({ rank: +m[1]!, local: +m[2]!, remote: +m[3]!, wait: m[4]! }))
    .sort((a, b) => a.rank - b.rank);
}

/** Lines of the tcp transport: it listens only where a rank has a peer on another node. */
const tcpListening = (output: string) => output.match(/tcp: rank \d+ listening/g) ?? [];

const run = (
  np: number,
  ssi: Record<string, string | number> = {},
  args = conformanceCasesFor(np),
) =>
  launchJob({
    np,
    program: conformanceProgram,
    args,
    ssi: { rpi: 'sm', rpi_verbose: 10, ...ssi },
    timeoutMs: 240_000,
    label: `sm conformance on ${np} ranks`,
  });

describe('sm rpi: conformance on one node', () => {
  it.each([2, 3, 4, 8])('passes every case on %i ranks, with no socket', async (np) => {
    const r = await run(np);
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.finalized).toEqual(new Array(np).fill(true));
    expect(layout(r.output).map((l) => [l.local, l.remote])).toEqual(new Array(np).fill([np, 0]));
    expect(tcpListening(r.output)).toEqual([]);
  });

  it.each(['spin', 'block'])('passes every case on 3 ranks with rpi_sm_wait %s', async (mode) => {
    const r = await run(3, { rpi_sm_wait: mode });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(layout(r.output).map((l) => l.wait)).toEqual([mode, mode, mode]);
  });

  it('with a 256-byte postbox, long messages take the two-record path and the rendezvous', async () => {
    const r = await run(3, { rpi_sm_short: 256 });
    expect(r.ok, explainJob(r)).toBe(true);
    const stats = [
      ...r.output.matchAll(/inline (\d+), eager in two records (\d+), by rendezvous (\d+)/g),
    ];
    expect(stats).toHaveLength(3);
    // every rank sent messages of 225..256 bytes in two records; the suite's long messages
    // (rank 0 and 2 send most of them) went by rendezvous
    expect(stats.every((m) => +m[2]! > 0)).toBe(true);
    expect(stats.reduce((n, m) => n + +m[3]!, 0)).toBeGreaterThan(1000);
  });
});

describe('sm rpi: oversubscription', () => {
  const np = availableParallelism() + 1;

  it(`with more ranks than cores (${np}) the default hybrid becomes block`, async () => {
    const r = await run(np, {}, ['modes', 'wildcards']);
    expect(r.ok, explainJob(r)).toBe(true);
    expect(layout(r.output).map((l) => l.wait)).toEqual(new Array(np).fill('block'));
    expect(r.output).toContain('oversubscribed');
  });

  it('a wait mode the user set is kept', async () => {
    const r = await run(np, { rpi_sm_wait: 'hybrid' }, ['modes']);
    expect(r.ok, explainJob(r)).toBe(true);
    expect(layout(r.output).map((l) => l.wait)).toEqual(new Array(np).fill('hybrid'));
  });

  it('a bad wait mode fails MPI.init naming the parameter and the choices', async () => {
    const r = await run(2, { rpi_sm_wait: 'fast' }, ['env']);
    expect(r.ok).toBe(false);
    expect(r.output).toContain('rpi_sm_wait must be one of spin, block, hybrid, got "fast"');
  });
});

describe('sm rpi: across node addresses (2+2+1): shared memory on-node, tcp between', () => {
  const nodes = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];

  it.each(['hybrid', 'spin'])('passes every case on 5 ranks with rpi_sm_wait %s', async (mode) => {
    const r = await launchJob({
      np: 5,
      nodes,
      program: conformanceProgram,
      args: conformanceCasesFor(5),
      ssi: { rpi: 'sm', rpi_verbose: 10, rpi_sm_wait: mode },
      timeoutMs: 240_000,
      label: `sm conformance on 2+2+1 ranks, ${mode}`,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(layout(r.output).map((l) => [l.local, l.remote])).toEqual([
      [2, 3],
      [2, 3],
      [2, 3],
      [2, 3],
      [1, 4],
    ]);
    // every rank has off-node peers, so every rank opened a tcp transport (and only those)
    expect(tcpListening(r.output)).toHaveLength(5);
    expect(r.output).toMatch(/rank 4 used no shared memory/);
  });
});

describe('sm rpi: spinning starves neither the tcp half nor timers', () => {
  it('a rank spinning for an on-node message receives from an off-node peer and runs its timers', async () => {
    const r = await launchJob({
      np: 5,
      nodes: ['127.0.0.2', '127.0.0.3', '127.0.0.4'],
      program: new URL('./fixtures/spin-fairness.mjs', import.meta.url).pathname,
      ssi: { rpi: 'sm', rpi_sm_wait: 'spin', rpi_verbose: 10 },
      timeoutMs: 60_000,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(layout(r.output)[0]!.wait).toBe('spin');
    const m = r.output.match(
      /off-node message \(sent at 300 ms\) after (\d+) ms, timer \(200 ms\) after (\d+) ms, on-node \(sent at 1000 ms\) after (\d+) ms/,
    );
    expect(m, r.output).not.toBeNull();
    const [off, timer, on] = [+m![1]!, +m![2]!, +m![3]!];
    // generous bounds for a loaded machine, but far below what a held event loop gives (> 1 s)
    expect(on).toBeGreaterThanOrEqual(900);
    expect(off).toBeLessThan(800);
    expect(timer).toBeLessThan(700);
  });
});

describe('sm rpi: selection', () => {
  it('is chosen over tcp by priority when ranks share a node', async () => {
    const r = await launchJob({
      np: 2,
      program: conformanceProgram,
      args: ['env'],
      ssi: { rpi_verbose: 10 },
      timeoutMs: 60_000,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output).toContain('selected rpi module sm (priority 50)');
  });

  it('declines a job of one process with a reason, so tcp runs it', async () => {
    const r = await launchJob({
      np: 1,
      program: conformanceProgram,
      args: ['env'],
      ssi: { rpi_verbose: 10 },
      timeoutMs: 60_000,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output).toContain('selected rpi module tcp');
    const forced = await launchJob({
      np: 1,
      program: conformanceProgram,
      args: ['env'],
      ssi: { rpi: 'sm' },
      timeoutMs: 60_000,
    });
    expect(forced.ok).toBe(false);
    expect(forced.output).toContain('a job of one process has no peer to share memory with');
  });
  it('declines when no two ranks share a node (one rank per node address), so tcp runs the job', async () => {
    const job = (ssi: Record<string, string | number>) =>
      launchJob({
        np: 3,
        nodes: ['127.0.0.2', '127.0.0.3', '127.0.0.4'],
        program: conformanceProgram,
        args: ['env'],
        ssi,
        timeoutMs: 60_000,
      });
    const r = await job({ rpi_verbose: 10 });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output).toContain('selected rpi module tcp');
    const forced = await job({ rpi: 'sm' });
    expect(forced.ok).toBe(false);
    expect(forced.output).toContain('no two ranks of this job share a node');
  });
});

describe('sm rpi: the collectives matrix', () => {
  const MATRIX = COLLECTIVE_CASES.filter((c) => c !== 'bad-input');

  it.each([4, 5])('every collective on %i ranks on one node', async (np) => {
    const r = await launchJob({
      np,
      program: collectivesProgram,
      args: MATRIX,
      ssi: { rpi: 'sm' },
      timeoutMs: 300_000,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    for (const c of MATRIX) expect(r.output).toContain(`case ${c} ok`);
  });

  it('every collective on 5 ranks across three node addresses (2+2+1)', async () => {
    const r = await launchJob({
      np: 5,
      nodes: ['127.0.0.2', '127.0.0.3', '127.0.0.4'],
      program: collectivesProgram,
      args: MATRIX,
      ssi: { rpi: 'sm' },
      timeoutMs: 300_000,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    for (const c of MATRIX) expect(r.output).toContain(`case ${c} ok`);
  });
});
