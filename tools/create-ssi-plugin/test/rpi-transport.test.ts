import { waitFor } from '@ssi/cli/testing';
import type { Proc } from '@ssi/mpi';
import { afterEach, describe, expect, it } from 'vitest';
import { Transport } from '../templates/rpi/transport.js';
import { job } from './fake-job';

/**
 * The rpi template's transport when a connection ends (two processes played in this one, over
 * real sockets): outside finalize the peer is reported lost, with the reason; a peer that sends
 * a frame no peer of this module sends is cut off and reported the same way; during finalize
 * nothing is reported.
 */
const transports: Transport[] = [];

afterEach(async () => {
  for (const t of transports.splice(0)) await t.finalize();
});

async function pair() {
  const j = job(2);
  const ts = j.hosts.map((h) => new Transport('fab', h, { short: 65536, connectTimeout: 5000 }));
  transports.push(...ts);
  await Promise.all(ts.map((t) => t.addprocs(j.procs as Proc[])));
  return { ...j, ts };
}

describe('the rpi template transport', () => {
  it('reports a connection that ends outside finalize as a lost peer, on the other side', async () => {
    const { ts, procs, failures } = await pair();
    ts[1]!.peers.get(procs[0]!)!.socket.destroy(); // rank 1's end goes away
    await waitFor('rank 0 to report rank 1 lost', () => failures.length > 0, 5000);
    expect(failures).toContainEqual([0, 1, 'the peer closed the connection']);
  });

  it('cuts off a peer that sends a frame no peer of this module sends, and reports why', async () => {
    const { ts, procs, failures } = await pair();
    const bad = Buffer.alloc(36);
    bad.writeUInt32LE(8, 0); // a frame shorter than its envelope
    ts[1]!.peers.get(procs[0]!)!.socket.write(bad);
    await waitFor('rank 0 to report rank 1 lost', () => failures.some((f) => f[0] === 0), 5000);
    expect(failures).toContainEqual([0, 1, 'a frame of 8 bytes is shorter than its envelope']);
  });

  it('reports nothing when the connections end in finalize', async () => {
    const { ts, failures } = await pair();
    transports.splice(0);
    await Promise.all(ts.map((t) => t.finalize()));
    expect(failures).toEqual([]);
  });
});
