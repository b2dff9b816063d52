import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeFrame, isLamError, LamClient, wipeSession } from '../src/index';
import { readSecret } from '../src/session/secret';
import { CHALLENGE_BYTES, makeProof, readChallenge } from '../src/wire/wire';
import {
  bootLocal,
  cleanupUniverses,
  envFor,
  isAlive,
  leftoverSessionDirs,
  SUFFIX,
  waitFor,
  within,
} from './helpers';

afterEach(cleanupUniverses);

const A = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];

/** A raw TCP connection to a lamd; resolves when the lamd has closed it (or after `ms`). */
function rawConnection(host: string, port: number) {
  const socket = connect({ host, port });
  const received: Buffer[] = [];
  socket.on('data', (d) => received.push(d));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return { socket, received, closed };
}

async function authenticate(socket: Socket, received: Buffer[], secret: Buffer): Promise<void> {
  await waitFor(
    'the lamd challenge',
    () => Buffer.concat(received).length >= CHALLENGE_BYTES,
    5000,
  );
  const nonce = readChallenge(Buffer.concat(received).subarray(0, CHALLENGE_BYTES))!;
  socket.write(makeProof(secret, nonce).bytes);
  await waitFor(
    'the lamd proof',
    () => Buffer.concat(received).length >= CHALLENGE_BYTES + 32,
    5000,
  );
}

const log = (u: { sessionDir(id: number): string }, id: number) =>
  readFileSync(join(u.sessionDir(id), 'lamd.log'), 'utf8');

describe('bad input and faults', () => {
  it('a node that fails to launch fails the boot, names the node, and leaves nothing behind', async () => {
    const err = await bootLocal(A, {
      fail: (n) => (n.name === '127.0.0.4' ? new Error('no route to the moon') : undefined),
      params: { boot_base_algorithm: 'linear' },
    }).catch((e) => e);
    expect(err.message).toMatch(
      /^lamboot failed on n2 \(127.0.0.4\): no route to the moon\nNo lamd was left running\./,
    );
    await waitFor(
      'the abandoned lamds to remove their session directories',
      () => leftoverSessionDirs().length === 0,
    );
  });

  it('a node that never calls back fails after boot_base_timeout, with what was awaited', async () => {
    const started = Date.now();
    const err = await bootLocal(A, {
      silent: (n) => n.name === '127.0.0.3',
      params: { boot_base_timeout: '2' },
    }).catch((e) => e);
    expect(isLamError(err, 'TIMEOUT')).toBe(true);
    expect(err.message).toContain(
      'n1 (127.0.0.3) did not call back within 2 s (boot_base_timeout)',
    );
    expect(Date.now() - started).toBeLessThan(15_000);
    await waitFor('no session directory left', () => leftoverSessionDirs().length === 0);
  });

  it('drops a client speaking garbage, logs it, and keeps serving everyone else', async () => {
    const u = await bootLocal(A.slice(0, 2));
    const node = u.universe[1]!;
    const c = await u.client(0);
    const raw = rawConnection(node.address, node.port);
    raw.socket.write('GET / HTTP/1.1\r\nHost: lamd\r\n\r\n'.padEnd(200, 'x'));
    await within(raw.closed, 5000, 'the lamd to drop the garbage connection');
    // the lamd logs once its side of the connection has closed: possibly after ours
    await waitFor('the lamd to log the dropped connection', () =>
      /dropped connection from 127\.0\.0\.\d+:\d+: authentication failed/.test(log(u, 1)),
    );
    expect((await c.ping(1)).pid).toBe(node.pid);
  });

  it('drops a connection that does not complete the handshake within lam_auth_timeout', async () => {
    const u = await bootLocal(A.slice(0, 2), { params: { lam_auth_timeout: '1' } });
    const node = u.universe[1]!;
    const raw = rawConnection(node.address, node.port);
    await within(raw.closed, 5000, 'the silent connection to be dropped');
    await waitFor('the lamd to log the dropped handshake', () =>
      /no valid handshake within 1000 ms/.test(log(u, 1)),
    );
  });

  it('refuses a client with another universe secret, and says so', async () => {
    const u = await bootLocal(A.slice(0, 2));
    const node = u.universe[1]!;
    const err = await LamClient.connect({
      tcp: { host: node.address, port: node.port, secret: randomBytes(32) },
    }).catch((e) => e);
    expect(isLamError(err, 'AUTH_FAILED')).toBe(true);
    expect(err.message).toMatch(/refused our universe secret/);
    // The client hears the refusal before the lamd has necessarily written its log line.
    await waitFor('the lamd to log the refused client', () =>
      /does not know the universe secret/.test(log(u, 1)),
    );
  });

  it('survives a fuzz of malformed frames from authenticated peers', async () => {
    const u = await bootLocal(A.slice(0, 2));
    const node = u.universe[1]!;
    const secret = readSecret(u.sessionDir(1));
    const valid = encodeFrame({ t: 'hello', proc: null, pid: 1, name: 'fuzz' });
    const cases: Buffer[] = [
      Buffer.from([0, 0, 0, 0]),
      Buffer.from([0xff, 0xff, 0xff, 0xff]),
      Buffer.from([0, 0, 0, 3, 0xc1, 0xc1, 0xc1]),
      encodeFrame({ t: 'ack' }),
      encodeFrame({ t: 'req', id: 1, src: { node: 0, proc: 1 }, node: 1, op: 'halt', args: null }),
      encodeFrame({ t: 'universe-init', nodes: [{ ...node, port: 1 }], me: 1 }),
      encodeFrame({ t: 'peer', node: 0 }),
    ];
    for (let i = 0; i < 40; i++) {
      const b = Buffer.from(valid);
      b[4 + (i % (b.length - 4))] = (i * 37) & 0xff;
      cases.push(b, randomBytes(5 + i));
    }
    for (const bytes of cases) {
      const raw = rawConnection(node.address, node.port);
      await authenticate(raw.socket, raw.received, secret);
      raw.socket.write(bytes);
      raw.socket.end();
      await within(raw.closed, 5000, 'the fuzz connection to close');
    }
    expect(isAlive(node.pid)).toBe(true);
    const c = await u.client(0);
    expect((await c.ping(1)).pid).toBe(node.pid);
    expect((await c.universe()).length).toBe(2);
    expect(log(u, 1)).toMatch(/protocol error/);
  });

  it('a lamd stopped by SIGTERM stops its processes, removes its session and others are told', async () => {
    const u = await bootLocal(A);
    const c = await u.client(0);
    const lost = new Promise<number>((resolve) =>
      c.once('node-lost', (node: number) => resolve(node)),
    );
    const victim = u.universe[2]!;
    const sleeper = await c.spawn(2, { argv: ['sleep', '60'] });
    process.kill(victim.pid, 'SIGTERM');
    expect(await within(sleeper.exited, 10_000, 'the sleep under the stopped lamd')).toMatchObject({
      signal: 'SIGTERM',
    });
    expect(await within(lost, 10_000, 'the node-lost event')).toBe(2);
    await waitFor(
      'the lamd to exit and remove its session',
      () => !isAlive(victim.pid) && !existsSync(u.sessionDir(2)),
    );
    await expect(c.ping(2)).rejects.toThrow(/the lamd of n2 \(127.0.0.4\) is unreachable/);
    expect((await c.ping(1)).pid).toBe(u.universe[1]!.pid);
  });

  it('a lamd killed with SIGKILL mid-job: waits fail at once, its processes die, wipe cleans up', async () => {
    const u = await bootLocal(A);
    const c = await u.client(0);
    const victim = u.universe[1]!;
    const sleeper = await c.spawn(1, { argv: ['sh', '-c', 'sleep 60; echo never'] });
    const pending = c.recv({ from: { node: 1 } });
    process.kill(victim.pid, 'SIGKILL');
    await expect(
      within(sleeper.exited, 10_000, 'the process to be reported lost'),
    ).rejects.toSatisfy((e: unknown) => isLamError(e, 'LAMD_LOST'));
    await expect(within(pending, 10_000, 'the recv to fail')).rejects.toThrow(
      /the lamd of n1 is gone/,
    );
    await waitFor(
      'the reaper to kill the orphaned process group',
      () => !isAlive(sleeper.pid),
      10_000,
    );
    expect(existsSync(u.sessionDir(1))).toBe(true);
    const report = await wipeSession(victim.name, SUFFIX);
    expect(report).toMatchObject({ lamd: 'none', removed: true });
    expect(existsSync(u.sessionDir(1))).toBe(false);
  });

  it('a stale session directory of a dead lamd does not block a new boot', async () => {
    const u = await bootLocal(A.slice(0, 2));
    for (const n of u.universe) process.kill(n.pid, 'SIGKILL');
    await waitFor('the lamds to die', () => u.universe.every((n) => !isAlive(n.pid)));
    expect(existsSync(u.sessionDir(0))).toBe(true);
    const again = await bootLocal(A.slice(0, 2));
    const c = await LamClient.connect({ env: envFor(A[0]!) });
    expect((await c.ping(1)).pid).toBe(again.universe[1]!.pid);
    c.close();
  });
});
