import { explainJob, killAllJobs, launchJob } from '@ssi/mpi/testing';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * Connections on first use (rpi_tcp_lazy 1), in real processes: the first message of
 * a pair in every pattern the conformance suite has, and which pairs got connected at all.
 */
afterEach(() => killAllJobs());

const firstContact = new URL('./fixtures/first-contact.mjs', import.meta.url).pathname;

/** Pairs that were dialed (`rank A connects to rank B on first use`), as "min-max". */
function dialedPairs(output: string): Set<string> {
  const pairs = new Set<string>();
  for (const m of output.matchAll(/rank (\d+) connects to rank (\d+) at \S+ on first use/g)) {
    const [a, b] = [Number(m[1]), Number(m[2])].sort((x, y) => x - y);
    pairs.add(`${a}-${b}`);
  }
  return pairs;
}

/** Dials logged with `why` ("a send to it started", "a receive from it is posted"), as "A->B". */
function dials(output: string, why: string): string[] {
  const found: string[] = [];
  for (const m of output.matchAll(
    /rank (\d+) connects to rank (\d+) at \S+ on first use \(([^)]*)\)/g,
  )) {
    if (m[3] === why) found.push(`${m[1]}->${m[2]}`);
  }
  return found;
}

describe('tcp rpi: connections on first use', () => {
  it('first messages both ways at once, ANY_SOURCE before any connection, ssend, cancel; silent pairs stay unconnected', async () => {
    const r = await launchJob({
      np: 6,
      program: firstContact,
      ssi: { rpi: 'tcp', rpi_verbose: 10, rpi_tcp_lazy: 1 },
      timeoutMs: 120_000,
      label: 'first contact',
    });
    expect(r.ok, explainJob(r)).toBe(true);
    for (let rank = 0; rank < 6; rank++)
      expect(r.output).toContain(`first-contact ok rank ${rank}`);
    expect(r.output).toContain('will connect to its 5 peers on first use');
    // every rank ran its first connection once in MPI.init (rpi_tcp_rehearse), to itself
    for (let rank = 0; rank < 6; rank++)
      expect(r.output).toContain(`tcp: rank ${rank} rehearsed a connection (to itself, over unix)`);
    // 0-3 talk to each other (6 pairs), 0-4 and 4-5: 8 of the 15 pairs; never 5 with 0-3
    expect([...dialedPairs(r.output)].sort()).toEqual(
      ['0-1', '0-2', '0-3', '0-4', '1-2', '1-3', '2-3', '4-5'].sort(),
    );
    const established = r.output.match(/tcp: rank \d+ connected to \d+ peers/g);
    expect(established, 'no eager mesh is built').toBeNull();
  });

  it('a receive naming a peer with no connection dials it; ANY_SOURCE dials nobody (rpi_tcp_recv_dial)', async () => {
    const r = await launchJob({
      np: 6,
      program: new URL('./fixtures/recv-first.mjs', import.meta.url).pathname,
      ssi: { rpi: 'tcp', rpi_verbose: 10, rpi_tcp_lazy: 1 },
      timeoutMs: 120_000,
      label: 'receives first',
    });
    expect(r.ok, explainJob(r)).toBe(true);
    for (let rank = 0; rank < 6; rank++) expect(r.output).toContain(`recv-first ok rank ${rank}`);
    const byReceive = dials(r.output, 'a receive from it is posted');
    // the receiver dials, earlier or later in the pair, and for a peer that never sends
    for (const d of ['0->1', '3->2', '5->0']) expect(byReceive, d).toContain(d);
    // both of 4 and 5 posted receives first: one connection (whoever's dial won)
    expect(byReceive.filter((d) => d === '4->5' || d === '5->4').length).toBeGreaterThan(0);
    // rank 1's ANY_SOURCE receive dials nobody: rank 2's send dials it
    expect(dials(r.output, 'a send to it started')).toContain('2->1');
    expect(byReceive.filter((d) => d.startsWith('1->'))).toEqual([]);
    // the senders of 0-1 and 2-3 found their connection (being) made: no second dial
    expect(dials(r.output, 'a send to it started')).not.toContain('1->0');
    expect(dials(r.output, 'a send to it started')).not.toContain('2->3');
    expect(r.output).not.toMatch(/lost the connection|cannot connect/);
  });

  it('rpi_tcp_recv_dial 0 and rpi_tcp_rehearse 0: only sends dial, no rehearsal, the same program passes', async () => {
    const r = await launchJob({
      np: 6,
      program: new URL('./fixtures/recv-first.mjs', import.meta.url).pathname,
      ssi: {
        rpi: 'tcp',
        rpi_verbose: 10,
        rpi_tcp_lazy: 1,
        rpi_tcp_recv_dial: 0,
        rpi_tcp_rehearse: 0,
      },
      timeoutMs: 120_000,
      label: 'receives first, no receive dials',
    });
    expect(r.ok, explainJob(r)).toBe(true);
    for (let rank = 0; rank < 6; rank++) expect(r.output).toContain(`recv-first ok rank ${rank}`);
    expect(dials(r.output, 'a receive from it is posted')).toEqual([]);
    expect(r.output, 'rpi_tcp_rehearse 0').not.toMatch(/rehearsed a connection|rehearsal/);
    const bySend = dials(r.output, 'a send to it started');
    for (const d of ['1->0', '2->3', '2->1']) expect(bySend, d).toContain(d);
    expect(bySend.filter((d) => d === '5->0' || d === '0->5')).toEqual([]); // never talk
  });

  it('rpi_tcp_lazy 0 keeps the eager mesh, and the same program passes', async () => {
    const r = await launchJob({
      np: 6,
      program: firstContact,
      args: ['eager'],
      ssi: { rpi: 'tcp', rpi_verbose: 10, rpi_tcp_lazy: 0 },
      timeoutMs: 120_000,
      label: 'first contact, eager mesh',
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(dialedPairs(r.output).size).toBe(0);
    expect(r.output.match(/tcp: rank \d+ connected to 5 peers/g)).toHaveLength(6);
  });

  for (const [direction, slow] of [
    ['forward', 1], // rank 0 (earlier) dials rank 1 before rank 1 knows any address
    ['backward', 2], // rank 3 (later) dials rank 2 before rank 2 knows any address
  ] as const) {
    it(`a dial that reaches a peer still waiting for the addresses waits for it (${direction} ring)`, async () => {
      // The peer's hello is parked, not refused: a refusal reads as the tie-break at the earlier
      // process (which then waits for a dial that never comes: the 64-rank failure of issue 21).
      // Only sends dial here (rpi_tcp_recv_dial 0): a receive's dial meeting the peer's send's
      // dial is refused by the tie-break by design, which is not the refusal this looks for.
      const r = await launchJob({
        np: 4,
        program: new URL('./fixtures/late-ring.mjs', import.meta.url).pathname,
        args: [direction],
        ssi: {
          rpi: 'tcp',
          rpi_verbose: 10,
          rpi_tcp_lazy: 1,
          rpi_tcp_recv_dial: 0,
          rpi_tcp_connect_timeout: 8000,
        },
        // Allgather 2 is tcp's exchange of addresses (1 is MPI.init's GPS exchange).
        rankEnv: (rank): Record<string, string> =>
          rank === slow ? { SSI_TEST_GATHER_DELAY: '2:1500' } : {},
        timeoutMs: 60_000,
        label: `late ring ${direction}`,
      });
      expect(r.ok, explainJob(r)).toBe(true);
      expect(r.output).toContain('late-ring token 4');
      for (let rank = 0; rank < 4; rank++) expect(r.output).toContain(`late-ring ok rank ${rank}`);
      expect(r.output).not.toMatch(/refused our dial/);
    });
  }

  it('simultaneous dials of many pairs settle on one connection each (repeated)', async () => {
    // Every rank's first act is a send to every other: on 8 ranks 28 pairs dial both ways at once.
    const r = await launchJob({
      np: 8,
      program: new URL('./fixtures/all-first.mjs', import.meta.url).pathname,
      ssi: { rpi: 'tcp', rpi_verbose: 10, rpi_tcp_lazy: 1 },
      timeoutMs: 120_000,
      label: 'all first',
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output.match(/all-first ok/g)).toHaveLength(8);
    // both ends dialed on most pairs: the tie-break ran (the later process's dial wins)
    const ties =
      (r.output.match(/dialed each other: theirs wins/g)?.length ?? 0) +
      (r.output.match(/refused our dial; awaiting its own/g)?.length ?? 0);
    expect(ties).toBeGreaterThan(0);
    // the documented tie-break: only the earlier process (here: lower rank) gives up its dial
    for (const m of r.output.matchAll(/rank (\d+) and (\d+) dialed each other: theirs wins/g)) {
      expect(Number(m[1]), m[0]).toBeLessThan(Number(m[2]));
    }
    expect(r.output).not.toMatch(/died in its handshake/);
  });
});
