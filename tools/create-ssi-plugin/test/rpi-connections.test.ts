import { createHmac } from 'node:crypto';
import net from 'node:net';
import type { Proc, RpiHost } from '@ssi/mpi';
import { afterEach, describe, expect, it } from 'vitest';
import { connectPeers, type Peer } from '../templates/rpi/connections.js';
import { encodeFrame, Op } from '../templates/rpi/frames.js';
import { job } from './fake-job';

/**
 * The rpi template's connection set-up, with the processes of a job played by hosts in this one
 * process (their allgather completes when every one has called it): every pair is connected
 * once; a connection without the job's proof is dropped; a peer that never comes fails the
 * set-up naming it.
 */
const sockets: net.Socket[] = [];
const peers: Peer[] = [];

afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const p of peers.splice(0)) p.socket.destroy();
});

/** Connects process `rank`; resolves with the peers it got, by world rank. */
async function connect(hosts: RpiHost[], rank: number, timeoutMs = 10_000) {
  const got = new Map<number, Peer>();
  await connectPeers(hosts[rank]!, hosts[rank]!.procs as Proc[], {
    name: 'fab',
    timeoutMs,
    connected: (peer: Peer) => {
      peers.push(peer);
      got.set(peer.proc!.gps.grank, peer);
    },
  });
  return got;
}

const hello = (rank: number, secret: Buffer) =>
  encodeFrame(
    { op: Op.HELLO, flags: 0, cid: 0, rank, tag: 0, kind: 0, seq: 0, sendId: 0 },
    createHmac('sha256', secret).update(`job-1:${rank}`).digest(),
  );

describe('the rpi template connections', () => {
  it('connect every pair of a 3-process job once, each end knowing who is at the other', async () => {
    const { hosts } = job(3);
    const all = await Promise.all([0, 1, 2].map((r) => connect(hosts, r)));
    all.forEach((got, rank) => {
      expect([...got.keys()].sort()).toEqual([0, 1, 2].filter((r) => r !== rank));
    });
    // A frame from 2 reaches 0 on the connection 0 has for 2.
    const arrived = new Promise((resolve) => {
      all[0]!.get(2)!.onFrame = (peer, env) => resolve([peer.proc!.gps.grank, env.tag]);
    });
    all[2]!
      .get(0)!
      .send({ op: Op.ACK, flags: 0, cid: 0, rank: 2, tag: 77, kind: 0, seq: 0, sendId: 1 });
    expect(await arrived).toEqual([2, 77]);
  });

  it('drop a connection whose HELLO lacks the proof, and fail naming the peer that never came', async () => {
    let stray: Promise<boolean> | undefined;
    const { hosts } = job(2, (rank, value) => {
      if (rank !== 0) return;
      // Someone who knows rank 0's address but not the secret claims to be rank 1.
      const { host, port } = value as { host: string; port: number };
      const s = net.connect(port, host, () => s.write(hello(1, Buffer.from('wrong secret'))));
      sockets.push(s);
      stray = new Promise((resolve) => s.on('close', () => resolve(true)).on('error', () => {}));
    });
    // Rank 1 never runs: rank 0's allgather is completed by hand with a place nobody listens.
    const done = connect(hosts, 0, 1000);
    await (hosts[1]!.runtime.allgather({ host: '127.0.0.1', port: 9 }) as Promise<unknown>);
    await expect(done).rejects.toThrow(
      'rpi fab: after 1000 ms (rpi_fab_connect_timeout) still not connected to rank 1 (node 0, pid 1001)',
    );
    expect(await stray).toBe(true); // rank 0 closed the stray connection
  });
});
