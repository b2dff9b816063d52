import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  conformanceCasesFor,
  conformanceProgram,
  explainJob,
  killAllJobs,
  launchJob,
} from '@ssi/mpi/testing';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * The point-to-point conformance suite of Ch. 5.3.1 over the tcp module, in real processes on
 * one node: every case on 2, 3, 4 and 8 ranks (the stress case: 100k checksummed messages).
 */
afterEach(() => killAllJobs());

/** The tcp rpi's finalize report (rpi_verbose 10): how its long messages went out, by rank. */
const creditStats = (output: string) =>
  [
    ...output.matchAll(
      /rank (\d) .*on a credit (\d+), on a crossing credit (\d+), after a clear to send (\d+)/g,
    ),
  ]
    .map((m) => ({
      rank: Number(m[1]),
      credited: Number(m[2]),
      crossed: Number(m[3]),
      asked: Number(m[4]),
    }))
    .sort((a, b) => a.rank - b.rank);

describe('tcp rpi: conformance on one node', () => {
  it.each([2, 3, 4, 8])('passes every case on %i ranks', async (np) => {
    const r = await launchJob({
      np,
      program: conformanceProgram,
      args: conformanceCasesFor(np),
      ssi: { rpi: 'tcp' },
      timeoutMs: 240_000,
      label: `conformance on ${np} ranks`,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.finalized).toEqual(new Array(np).fill(true));
  });

  it('passes every case on 4 ranks with connections on first use (rpi_tcp_lazy 1)', async () => {
    const r = await launchJob({
      np: 4,
      program: conformanceProgram,
      args: conformanceCasesFor(4),
      ssi: { rpi: 'tcp', rpi_tcp_lazy: 1 },
      timeoutMs: 240_000,
      label: 'conformance on 4 ranks, lazy connections',
    });
    expect(r.ok, explainJob(r)).toBe(true);
  });

  // (Not `cancel`: it relies on a 10-element standard send completing eagerly.)
  it('with a 16-byte eager limit, nearly every message takes the rendezvous protocol', async () => {
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
      ssi: { rpi: 'tcp', rpi_tcp_short: 16 },
      timeoutMs: 120_000,
    });
    expect(r.ok, explainJob(r)).toBe(true);
  });
});

describe('tcp rpi: its transport surface, driven by another module', () => {
  const modules = join(import.meta.dirname, 'fixtures', 'modules');

  /** `twopath: rank R drained p:theirs/received ... (peers a+b)` lines, by rank. */
  function drains(output: string): Map<number, { peers: string; counts: number[][] }> {
    const out = new Map<number, { peers: string; counts: number[][] }>();
    for (const m of output.matchAll(
      /twopath: rank (\d+) drained ([\d:/ ]+) \(peers (\d+\+\d+)\)/g,
    )) {
      const counts = m[2]!
        .trim()
        .split(' ')
        .map((c) => c.split(/[:/]/).map(Number));
      out.set(Number(m[1]), { peers: m[3]!, counts });
    }
    return out;
  }

  it('a module with two tcp paths passes every case on 4 ranks, matching across both, and drains', async () => {
    const r = await launchJob({
      np: 4,
      program: conformanceProgram,
      args: conformanceCasesFor(4),
      ssi: { rpi: 'twopath', ssi_base_module_path: modules, rpi_verbose: 0 },
      timeoutMs: 240_000,
      label: 'conformance over twopath',
    });
    expect(r.ok, explainJob(r)).toBe(true);
    const d = drains(r.output);
    expect([...d.keys()].sort()).toEqual([0, 1, 2, 3]);
    for (const [rank, { peers, counts }] of d) {
      // Pairs of odd rank sum use the second transport: ranks 0 and 2 have 1+2 peers, 1 and 3 too.
      expect(peers, `rank ${rank}'s peers per path`).toBe('1+2');
      expect(counts.map(([peer]) => peer)).toEqual([0, 1, 2, 3].filter((p) => p !== rank));
      for (const [peer, theirs, received] of counts) {
        expect(received, `bytes rank ${rank} read from ${peer}`).toBe(theirs);
        expect(theirs).toBeGreaterThan(100_000); // the cases moved real traffic on every pair
      }
    }
  });

  it('the tcp parameters apply to the transports another module opens', async () => {
    const r = await launchJob({
      np: 2,
      program: conformanceProgram,
      args: ['modes', 'unexpected', 'preposted', 'sizes'],
      ssi: { rpi: 'twopath', ssi_base_module_path: modules, rpi_tcp_short: 16, rpi_verbose: 10 },
      timeoutMs: 120_000,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    // With a 16-byte eager limit the long messages asked or went on credits: counted at finalize.
    const stats = creditStats(r.output);
    expect(stats.length).toBeGreaterThan(0);
    expect(stats.some((s) => s.credited + s.crossed + s.asked > 10)).toBe(true);
  });
});

describe('tcp rpi: conformance across node addresses', () => {
  it('passes every case with 5 ranks on three node addresses (2+2+1)', async () => {
    const r = await launchJob({
      np: 5,
      nodes: ['127.0.0.2', '127.0.0.3', '127.0.0.4'],
      program: conformanceProgram,
      args: conformanceCasesFor(5),
      ssi: { rpi: 'tcp' },
      timeoutMs: 240_000,
    });
    expect(r.ok, explainJob(r)).toBe(true);
  });
});

describe('jobs that end on purpose: the whole job ends, with the reason', () => {
  const ending = (c: string, np = 3) =>
    launchJob({
      np,
      program: conformanceProgram,
      args: [c],
      ssi: { rpi: 'tcp' },
      timeoutMs: 60_000,
    });

  it('abort(7) on one rank', async () => {
    const r = await ending('abort');
    expect(r.ok).toBe(false);
    expect(r.abort).toMatchObject({
      rank: 1,
      code: 7,
      message: expect.stringContaining('rank 1 gives up'),
    });
  });

  it('an error under ERRORS_ARE_FATAL names rank, communicator and call', async () => {
    const r = await ending('fatal-rank');
    expect(r.abort?.rank).toBe(2);
    expect(r.abort?.message).toMatch(/rank 2 in COMM_WORLD\.send: ERR_RANK/);
  });

  it('an unhandled rejection aborts the job instead of leaving the others waiting', async () => {
    const r = await ending('unhandled-rejection');
    expect(r.abort?.rank).toBe(0);
    expect(r.abort?.message).toMatch(/unhandled rejection: .*nobody handles this/);
  });

  it('a rank that exits without MPI.finalize fails the job', async () => {
    const r = await ending('no-finalize');
    expect(r.ok).toBe(false);
    expect(r.output).toContain('without calling MPI.finalize');
  });

  it('a rank killed by SIGKILL: the others do not hang', async () => {
    const r = await ending('peer-exit');
    expect(r.ok).toBe(false);
    expect(r.failure).toMatch(/rank 1/);
  });
});

describe('tcp rpi: large messages into posted receives are not copied', () => {
  it.each([
    ['on a credit', 1],
    ['by rendezvous', 0],
  ])(
    'reads a 16 MiB body sent %s straight into the posted buffer (at most the head and tail reads are copied)',
    async (_how, credits) => {
      const r = await launchJob({
        np: 2,
        program: new URL('./fixtures/posted-large.mjs', import.meta.url).pathname,
        // The eager mesh: on first use, a receive posted before its pair is connected has nobody
        // to grant its credit to, and this test counts credits from the first message on.
        ssi: { rpi: 'tcp', rpi_verbose: 10, rpi_tcp_credits: credits, rpi_tcp_lazy: 0 },
        timeoutMs: 60_000,
      });
      expect(r.ok, explainJob(r)).toBe(true);
      const stats = [
        ...r.output.matchAll(
          /rank (\d) body bytes read directly (\d+), copied into posted receives (\d+).*on a credit (\d+), on a crossing credit \d+, after a clear to send (\d+)/g,
        ),
      ];
      expect(stats.map((m) => m[1]).sort()).toEqual(['0', '1']);
      for (const [, , direct, copied, credited, asked] of stats) {
        // each rank received one message of 16 MiB or 16 MiB + 1 (plus a small marker, copied):
        // the 4 KiB read after its envelope and the 64-byte tail go through the read buffer
        expect(Number(copied)).toBeLessThanOrEqual(4096 + 64 + 64);
        expect(Number(direct)).toBeGreaterThanOrEqual(16 * 1024 * 1024 - 4096 - 64);
        expect([Number(credited), Number(asked)]).toEqual(credits ? [1, 0] : [0, 1]);
      }
    },
  );
});

describe('tcp rpi: receiver-initiated rendezvous (credits)', () => {
  it('long messages to receives posted first go out at once, without a request to send', async () => {
    const r = await launchJob({
      np: 2,
      program: new URL('./fixtures/preposted-pingpong.mjs', import.meta.url).pathname,
      ssi: { rpi: 'tcp', rpi_verbose: 10 },
      timeoutMs: 60_000,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    const stats = creditStats(r.output);
    // Rank 1 posts its first receive before rank 0 can have heard of it: at most that one
    // message asks first (and its body goes when the credit crosses the request, or when it is
    // cleared to send). Every other of the 50 messages each way finds its credit.
    expect(stats).toHaveLength(2);
    for (const s of stats) {
      expect(s.credited + s.crossed + s.asked).toBe(50);
      expect(s.crossed + s.asked).toBeLessThanOrEqual(1);
    }
  });

  it('a credit that crosses the request to send lets the body go without the clear to send', async () => {
    const markers = mkdtempSync(join(tmpdir(), 'ssi-crossing-'));
    try {
      const r = await launchJob({
        np: 2,
        program: new URL('./fixtures/crossing-credit.mjs', import.meta.url).pathname,
        args: [markers],
        ssi: { rpi: 'tcp', rpi_verbose: 10, rpi_tcp_lazy: 0 }, // credits from the first message on
        timeoutMs: 60_000,
      });
      expect(r.ok, explainJob(r)).toBe(true);
      // rank 0: both persistent passes, the withdrawn and the first wildcard message crossed;
      // the second wildcard message (its credit was used up) and the synchronous one asked
      expect(creditStats(r.output).map((s) => [s.credited, s.crossed, s.asked])).toEqual([
        [0, 4, 2],
        [0, 0, 0],
      ]);
    } finally {
      rmSync(markers, { recursive: true, force: true });
    }
  });

  it('with rpi_tcp_credits 0 every long message asks first', async () => {
    const r = await launchJob({
      np: 2,
      program: new URL('./fixtures/preposted-pingpong.mjs', import.meta.url).pathname,
      ssi: { rpi: 'tcp', rpi_verbose: 10, rpi_tcp_credits: 0 },
      timeoutMs: 60_000,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(creditStats(r.output).map((s) => [s.credited, s.crossed, s.asked])).toEqual([
      [0, 0, 50],
      [0, 0, 50],
    ]);
  });

  it('passes the conformance cases with credits off', async () => {
    const r = await launchJob({
      np: 3,
      program: conformanceProgram,
      args: conformanceCasesFor(3),
      ssi: { rpi: 'tcp', rpi_tcp_credits: 0 },
      timeoutMs: 240_000,
    });
    expect(r.ok, explainJob(r)).toBe(true);
  });
});

describe('tcp rpi: kernel socket buffers (rpi_tcp_sndbuf, rpi_tcp_rcvbuf)', () => {
  it('sets SO_SNDBUF / SO_RCVBUF of every socket; messages of every size still pass', async () => {
    const r = await launchJob({
      np: 3,
      program: conformanceProgram,
      args: ['modes', 'preposted', 'sizes'],
      ssi: { rpi: 'tcp', rpi_verbose: 10, rpi_tcp_sndbuf: 131072, rpi_tcp_rcvbuf: 262144 },
      timeoutMs: 120_000,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    const lines = [...r.output.matchAll(/kernel buffers send (\d+), receive (\d+) bytes/g)].map(
      (m) => [Number(m[1]), Number(m[2])],
    );
    // 3 ranks: 3 sockets, tuned at both ends; Linux reports twice what was set
    expect(lines).toEqual(new Array(6).fill([2 * 131072, 2 * 262144]));
  });

  it('a size beyond the kernel limit is cut, and the job says so and how to raise it', async () => {
    const r = await launchJob({
      np: 2,
      program: conformanceProgram,
      args: ['env'],
      ssi: { rpi: 'tcp', rpi_tcp_sndbuf: 1 << 30 },
      timeoutMs: 60_000,
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(r.output).toMatch(/the kernel cut the socket buffers \(send 1073741824 → \d+ bytes\)/);
    expect(r.output).toContain('net.core.wmem_max');
  });

  it('a bad size fails MPI.init with the parameter, the value and what is expected', async () => {
    const r = await launchJob({
      np: 2,
      program: conformanceProgram,
      args: ['env'],
      ssi: { rpi: 'tcp', rpi_tcp_rcvbuf: '-5' },
      timeoutMs: 60_000,
    });
    expect(r.ok).toBe(false);
    expect(r.output).toContain(
      'rpi_tcp_rcvbuf must be 0 (the kernel\'s autotuning) or a size in bytes up to 2147483647, got "-5"',
    );
  });
});
