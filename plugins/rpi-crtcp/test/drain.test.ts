import { join } from 'node:path';
import { explainJob, killAllJobs, launchJob } from '@ssi/mpi/testing';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * Messages in flight at a checkpoint, in real processes: `fixtures/drain-job.mjs` starts small and
 * large (rendezvous) isends / issends on every pair, posts only half the receives, interrupts and
 * checkpoints at once, checks inside every rank that the drain left nothing on the wire, then
 * continues or restarts (new connections) and checks every byte. Here the ranks' reports are
 * compared with each other: what i wrote to j is what j read from i, in bytes and in messages.
 */
afterEach(() => killAllJobs());

const program = join(import.meta.dirname, 'fixtures', 'drain-job.mjs');

interface Drain {
  round: number;
  rank: number;
  bytes: number;
  messages: number;
  peers: { peer: number; sent: number; theirSent: number; received: number; queued: number }[];
  counts: Record<string, { messagesSent: number; messagesReceived: number }>;
}

function drains(output: string): Drain[] {
  return [...output.matchAll(/DRAIN (\{.*\})/g)].map((m) => JSON.parse(m[1]!) as Drain);
}

/** Every pair's counts agree across the two ranks' reports of the same round. */
function expectPairsAgree(all: Drain[], np: number, rounds: number): void {
  expect(all.length, 'one report per rank and round').toBe(np * rounds);
  for (let round = 0; round < rounds; round++) {
    const by = new Map(all.filter((d) => d.round === round).map((d) => [d.rank, d]));
    for (let i = 0; i < np; i++) {
      for (let j = 0; j < np; j++) {
        if (i === j) continue;
        const from = by.get(i)!.peers.find((p) => p.peer === j)!;
        const to = by.get(j)!.peers.find((p) => p.peer === i)!;
        const pair = `round ${round}, rank ${i} → rank ${j}`;
        expect(to.received, `${pair}: bytes read vs written`).toBe(from.sent);
        expect(to.theirSent, `${pair}: count exchanged`).toBe(from.sent);
        expect(by.get(j)!.counts[i]!.messagesReceived, `${pair}: messages`).toBe(
          by.get(i)!.counts[j]!.messagesSent,
        );
      }
    }
  }
  // The ranks interrupted right after starting their sends: the drains read real traffic.
  const round0 = all.filter((d) => d.round === 0);
  expect(round0.reduce((s, d) => s + d.messages, 0)).toBeGreaterThan(0);
  expect(round0.reduce((s, d) => s + d.bytes, 0)).toBeGreaterThan(0);
}

describe('crtcp: a checkpoint drains every channel (Fig. 7.8)', () => {
  it.each([
    [2, 'continue'],
    [3, 'continue'],
    [4, 'continue'],
    [2, 'restart'],
    [3, 'restart'],
    [4, 'restart'],
  ])('%i ranks: in-flight messages drained, then %s, every byte checked', async (np, mode) => {
    const rounds = 2;
    const r = await launchJob({
      np,
      program,
      args: [mode, String(rounds)],
      ssi: { rpi: 'crtcp', rpi_verbose: 1 },
      timeoutMs: 120_000,
      label: `drain-job ${mode} on ${np} ranks`,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output.match(/OK rank \d+/g)?.length).toBe(np);
    expectPairsAgree(drains(r.output), np, rounds);
    expect(r.output).toMatch(/crtcp: rank 0 drained \d+ bytes, \d+ messages from/);
    if (mode === 'restart') expect(r.output).toMatch(/crtcp: rank 0 reconnected to/);
  });

  it('opens tcp as the eager mesh even with rpi_tcp_lazy 1 (its drain and reconnect pair everyone)', async () => {
    const np = 3;
    const r = await launchJob({
      np,
      program,
      args: ['restart', '1'],
      ssi: { rpi: 'crtcp', rpi_verbose: 10, rpi_tcp_lazy: 1 },
      timeoutMs: 120_000,
      label: 'drain-job restart on 3 ranks, rpi_tcp_lazy 1',
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output).toMatch(/tcp: rank 0 connected to 2 peers/);
    expect(r.output).not.toMatch(/on first use/);
    expectPairsAgree(drains(r.output), np, 1);
    expect(r.output).toMatch(/crtcp: rank 0 reconnected to 2 peers/);
  });

  it.each([
    [2, 'continue'],
    [4, 'restart'],
  ])(
    '%i ranks, megabytes of eager data on the wire at the checkpoint, then %s',
    async (np, mode) => {
      const rounds = 1;
      const r = await launchJob({
        np,
        program,
        args: [mode, String(rounds), String(6 << 20)],
        ssi: { rpi: 'crtcp', rpi_tcp_short: 8 << 20, rpi_verbose: 1 },
        timeoutMs: 120_000,
        label: `drain-job ${mode} on ${np} ranks, 6 MiB eager`,
      });
      expect(r.ok, explainJob(r)).toBe(true);
      expectPairsAgree(drains(r.output), np, rounds);
      const drained = drains(r.output).reduce((s, d) => s + d.bytes, 0);
      expect(drained).toBeGreaterThan(0);
    },
  );
});
