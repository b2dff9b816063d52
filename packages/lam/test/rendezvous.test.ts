import { describe, expect, it } from 'vitest';
import { type BootNode, isLamError, TcpRendezvous } from '../src/index';

const node = (id: number, address: string): BootNode => ({
  id,
  name: address,
  address,
  cpus: 1,
  schedulable: true,
  boot: true,
  origin: id === 0,
  me: id === 0,
  keyval: {},
});

describe('TcpRendezvous', () => {
  it('close() rejects a receive still waiting, at once, naming the node (no timer left behind)', async () => {
    const nodes = [node(0, '127.0.0.2'), node(1, '127.0.0.3')];
    const r = new TcpRendezvous({ secret: Buffer.alloc(32, 7), timeoutMs: 60_000 });
    await r.open('127.0.0.2', nodes);
    const waiting = r.receive([nodes[1]!]);
    const t0 = Date.now();
    await r.close();
    const err = await waiting.catch((e) => e);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(isLamError(err, 'CLOSED')).toBe(true);
    expect(err.message).toBe('the boot rendezvous was closed while waiting for n1 (127.0.0.3)');
  });

  it('a receive still times out after timeoutMs when nobody calls back', async () => {
    const nodes = [node(0, '127.0.0.2')];
    const r = new TcpRendezvous({ secret: Buffer.alloc(32, 7), timeoutMs: 200 });
    await r.open('127.0.0.2', nodes);
    try {
      await expect(r.receive(nodes)).rejects.toThrow(/did not call back within 0.2 s/);
    } finally {
      await r.close();
    }
  });
});
