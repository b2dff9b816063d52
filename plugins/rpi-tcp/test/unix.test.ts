import net from 'node:net';
import type { Proc } from '@ssi/mpi';
import {
  conformanceCasesFor,
  conformanceProgram,
  explainJob,
  killAllJobs,
  launchJob,
} from '@ssi/mpi/testing';
import { sockoptAvailable } from '@ssi/sockopt';
import { afterEach, describe, expect, it } from 'vitest';
import { Connection, type ConnectionOwner } from '../src/connection';
import { dialsUnix, unixName } from '../src/unix-path';

/**
 * Unix-domain sockets between ranks of one node (`rpi_tcp_unix`, issue 18), in real processes:
 * the conformance suite over them, a job across two node addresses (TCP between the nodes, Unix
 * within each), the off switch, and the fall-back to TCP when a Unix dial fails.
 */
afterEach(() => killAllJobs());

/** `tcp: rank A to rank B over F` lines (rpi_verbose 10): the family of each pair, "A-B" -> F. */
function families(output: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of output.matchAll(/tcp: rank (\d+) to rank (\d+) over (tcp|unix)/g)) {
    const [a, b] = [Number(m[1]), Number(m[2])].sort((x, y) => x - y);
    const key = `${a}-${b}`;
    const seen = out.get(key);
    // both ends report the pair; they must agree
    if (seen !== undefined && seen !== m[3]) out.set(key, `${seen}/${m[3]}`);
    else out.set(key, m[3]!);
  }
  return out;
}

/** Every pair of `np` ranks, "a-b" with a < b, mapped by `family(a, b)`. */
function allPairs(np: number, family: (a: number, b: number) => string): Map<string, string> {
  const out = new Map<string, string>();
  for (let a = 0; a < np; a++) for (let b = a + 1; b < np; b++) out.set(`${a}-${b}`, family(a, b));
  return out;
}

const onLinux = process.platform === 'linux';

describe.runIf(onLinux)('tcp rpi over Unix sockets (rpi_tcp_unix)', () => {
  it('passes every conformance case on 4 ranks of one node, every pair over a Unix socket', async () => {
    const r = await launchJob({
      np: 4,
      program: conformanceProgram,
      args: conformanceCasesFor(4),
      ssi: { rpi: 'tcp', rpi_verbose: 10 },
      timeoutMs: 240_000,
      label: 'conformance over unix',
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(families(r.output)).toEqual(allPairs(4, () => 'unix'));
    // rpi_tcp_unix_sndbuf (1 MiB by default) sizes every Unix socket where the addon can
    const tuned = r.output.match(/kernel buffers send (\d+), receive \d+ bytes/g) ?? [];
    if (sockoptAvailable().ok) {
      expect(tuned).toHaveLength(12); // 6 pairs, both ends
      // Linux reports twice the request, capped at twice net.core.wmem_max
      for (const line of tuned) expect(Number(/send (\d+)/.exec(line)![1])).toBeGreaterThan(212992);
    } else expect(r.output).toContain("kernel's buffers (");
  });

  it('connections on first use (rpi_tcp_lazy 1) go over Unix sockets too, and pass', async () => {
    const r = await launchJob({
      np: 3,
      program: conformanceProgram,
      args: conformanceCasesFor(3),
      ssi: { rpi: 'tcp', rpi_verbose: 10, rpi_tcp_lazy: 1 },
      timeoutMs: 240_000,
      label: 'conformance over unix, lazy',
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(families(r.output)).toEqual(allPairs(3, () => 'unix'));
  });

  it('across two node addresses: TCP between the nodes, Unix within each; conformance passes', async () => {
    // 4 ranks in blocks of 2: ranks 0, 1 on 127.0.0.2 and ranks 2, 3 on 127.0.0.3
    const r = await launchJob({
      np: 4,
      program: conformanceProgram,
      args: conformanceCasesFor(4),
      ssi: { rpi: 'tcp', rpi_verbose: 10 },
      nodes: ['127.0.0.2', '127.0.0.3'],
      timeoutMs: 240_000,
      label: 'conformance on two nodes',
    });
    expect(r.ok, explainJob(r)).toBe(true);
    const node = (rank: number) => (rank < 2 ? 0 : 1);
    expect(families(r.output)).toEqual(
      allPairs(4, (a, b) => (node(a) === node(b) ? 'unix' : 'tcp')),
    );
  });

  it('rpi_tcp_unix 0 connects every pair over TCP', async () => {
    const r = await launchJob({
      np: 3,
      program: conformanceProgram,
      args: ['modes', 'sizes'],
      ssi: { rpi: 'tcp', rpi_verbose: 10, rpi_tcp_unix: 0 },
      timeoutMs: 120_000,
      label: 'rpi_tcp_unix 0',
    });
    expect(r.ok, explainJob(r)).toBe(true);
    expect(families(r.output)).toEqual(allPairs(3, () => 'tcp'));
    expect(r.output).not.toContain('ssi-rpi-tcp-');
    expect(r.output).not.toContain('kernel buffers send'); // TCP sockets keep the autotuning
  });
});

describe('rpi_tcp_unix: the choice of a dial', () => {
  const proc = (grank: number, node: number) => ({ gps: { grank, node } }) as unknown as Proc;

  it('dials a Unix socket only to a peer on this node that published one, when enabled', () => {
    const me = proc(0, 0);
    expect(dialsUnix(me, proc(1, 0), '\0x', true)).toBe(true);
    expect(dialsUnix(me, proc(1, 1), '\0x', true)).toBe(false); // another node
    expect(dialsUnix(me, proc(1, 0), undefined, true)).toBe(false); // it listens on TCP only
    expect(dialsUnix(me, proc(1, 0), '\0x', false)).toBe(false); // rpi_tcp_unix 0 here
  });

  it('names are abstract, per job and rank, and never repeat', () => {
    const a = unixName('job/1', 3);
    expect(a.startsWith('\0ssi-rpi-tcp-job_1-3-')).toBe(true);
    expect(unixName('job/1', 3)).not.toBe(a);
  });
});

describe.runIf(onLinux)('rpi_tcp_unix: a Unix dial that fails falls back to TCP', () => {
  let server: net.Server | null = null;
  afterEach(() => {
    server?.close();
    server = null;
  });

  it('dials the TCP listener instead, and says why', async () => {
    const hello = new Promise<number>((resolve) => {
      server = net.createServer((s) => s.once('data', (d) => resolve(d.length)));
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server!.address() as net.AddressInfo).port;
    const owner = {
      jobId: 'j',
      secret: new Uint8Array(32),
      myRank: 0,
      closed: () => {},
    } as unknown as ConnectionOwner;
    const peer = { gps: { grank: 1, node: 0 } } as unknown as Proc;
    const nobody = unixName('nobody-listens', 1);
    const to = { host: '127.0.0.1', port, localAddress: '127.0.0.1', unix: nobody };
    const conn = Connection.connect(owner, peer, to, true);
    const bytes = await Promise.race([
      hello,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('no hello reached the TCP listener in 10 s')), 10_000),
      ),
    ]);
    expect(bytes).toBeGreaterThan(0);
    expect(conn.via).toBe('tcp');
    expect(conn.unixFailure).toMatch(/ECONNREFUSED/);
    conn.socket.destroy();
  });
});
