import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { discoverModules, ParamRegistry } from '@ssi/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cleanUniverse,
  growUniverse,
  haltUniverse,
  isLamError,
  type LamClient,
  shrinkUniverse,
} from '../src/index';
import {
  bootLocal,
  cleanupUniverses,
  envFor,
  isAlive,
  leftoverSessionDirs,
  localBootModule,
  waitFor,
  within,
} from './helpers';

afterEach(cleanupUniverses);

const A = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];

async function collect(c: LamClient, node: number, argv: string[]) {
  const p = await c.spawn(node, { argv });
  let out = '';
  let err = '';
  p.on('stdout', (d: Buffer) => {
    out += d;
  });
  p.on('stderr', (d: Buffer) => {
    err += d;
  });
  const status = await within(p.exited, 10_000, `${argv.join(' ')} on n${node} to exit`);
  return { status, out, err, pid: p.pid };
}

describe('a booted universe', () => {
  it('is known to every lamd, with flags, in private session directories', async () => {
    const u = await bootLocal(A, { lines: ['cpu=2', '', 'schedule=no'] });
    expect(u.universe.map((n) => [n.id, n.name, n.cpus, n.origin, n.schedulable])).toEqual([
      [0, '127.0.0.2', 2, true, true],
      [1, '127.0.0.3', 1, false, true],
      [2, '127.0.0.4', 1, false, false],
    ]);
    for (const node of u.universe) {
      const c = await u.client(node.id);
      expect(c.node).toBe(node.id);
      expect(await c.universe()).toEqual(u.universe);
      const dir = u.sessionDir(node.id);
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      expect(statSync(join(dir, 'secret')).mode & 0o777).toBe(0o600);
      expect(JSON.parse(readFileSync(join(dir, 'universe.json'), 'utf8')).me).toBe(node.id);
    }
  });

  it('boots with the linear algorithm too', async () => {
    const u = await bootLocal(A, { params: { boot_base_algorithm: 'linear' } });
    const c = await u.client(2);
    for (const n of u.universe) expect((await c.ping(n.id)).pid).toBe(n.pid);
  });

  it('refuses a second lamboot over the running universe, naming what runs', async () => {
    await bootLocal(A.slice(0, 2));
    await expect(bootLocal(A.slice(0, 2))).rejects.toThrow(
      /a universe is already running here \(lamd pid \d+, session directory .*\); run lamhalt first/,
    );
  });

  it('starts processes anywhere, forwards their output and exit status, delivers signals', async () => {
    const u = await bootLocal(A);
    const c = await u.client(0);
    const r = await collect(c, 2, [
      'sh',
      '-c',
      'echo "n=$LAM_MPI_NODE_ID dir=$LAM_MPI_SESSION_DIR"; echo oops >&2; exit 3',
    ]);
    expect(r.out).toBe(`n=2 dir=${u.sessionDir(2)}\n`);
    expect(r.err).toBe('oops\n');
    expect(r.status).toEqual({ code: 3, signal: null });

    const sleeper = await c.spawn(1, { argv: ['sleep', '30'] });
    expect(isAlive(sleeper.pid)).toBe(true);
    await sleeper.kill('SIGTERM');
    expect(await within(sleeper.exited, 5000, 'the signalled sleep to exit')).toEqual({
      code: null,
      signal: 'SIGTERM',
    });

    await expect(c.spawn(1, { argv: ['no-such-program-xyz'] })).rejects.toThrow(
      /on n1 \(127.0.0.3\): cannot start "no-such-program-xyz": no such program/,
    );
    await expect(c.signal(1, 1, 'SIGTERM')).rejects.toThrow(
      /process 1 was not started by this lamd/,
    );
  });

  it('routes OOB messages between processes on different nodes, in order per pair', async () => {
    const u = await bootLocal(A);
    const a = await u.client(0);
    const b = await u.client(2, 31337);
    expect(b.address).toEqual({ node: 2, proc: 31337 });
    const sends = Array.from({ length: 300 }, (_, i) =>
      a.send(b.address, i % 3, { i, bytes: Buffer.alloc(i) }),
    );
    await within(Promise.all(sends), 10_000, 'the sends to be accepted');
    const got: number[] = [];
    for (let i = 0; i < 300; i++) {
      const m = await within(b.recv({ from: { node: 0 } }), 5000, `message ${i}`);
      expect(m.src).toEqual(a.address);
      got.push((m.data as { i: number }).i);
    }
    expect(got).toEqual(Array.from({ length: 300 }, (_, i) => i));
    // tags select; other tags wait their turn
    await a.send(b.address, 1, 'one');
    await a.send(b.address, 2, 'two');
    expect((await b.recv({ tag: 2 })).data).toBe('two');
    expect((await b.recv({ tag: 1 })).data).toBe('one');
    await expect(b.recv({ tag: 99 }, { timeoutMs: 200 })).rejects.toThrow(
      /no OOB message \(tag 99\) within 200 ms/,
    );
  });

  it('holds messages for a process that has not attached yet', async () => {
    const u = await bootLocal(A.slice(0, 2));
    const a = await u.client(0);
    await a.send({ node: 1, proc: 4242 }, 5, 'early');
    const late = await u.client(1, 4242);
    expect((await within(late.recv({ tag: 5 }), 5000, 'the held message')).data).toBe('early');
  });

  it('answers bad addresses with errors that say what is wrong', async () => {
    const u = await bootLocal(A.slice(0, 2));
    const a = await u.client(0);
    await expect(a.send({ node: 7, proc: 1 }, 0, 'x')).rejects.toThrow(
      /node n7 is not in the universe \(it has n0, n1\)/,
    );
    await expect(a.ping(9)).rejects.toSatisfy((e: unknown) => isLamError(e, 'UNKNOWN_NODE'));
    await expect(a.send({ node: 1, proc: 2 ** 22 + 5 }, 0, 'x')).rejects.toThrow(
      /process n1:4194309 is not attached/,
    );
    await expect(a.request(1, 'launch' as 'ping', null)).rejects.toThrow(
      /unknown request "launch"/,
    );
    await expect(u.client(1, 4242).then(() => u.client(1, 4242))).rejects.toThrow(
      /process id 4242 is already attached/,
    );
  });

  it('lamclean stops what the lamds started and keeps the universe', async () => {
    const u = await bootLocal(A);
    const c = await u.client(0);
    const sleepers = await Promise.all(
      u.universe.map((n) => c.spawn(n.id, { argv: ['sleep', '60'] })),
    );
    const outcomes = await cleanUniverse(c);
    expect(outcomes.map((o) => o.value?.killed)).toEqual([1, 1, 1]);
    for (const s of sleepers)
      expect(await within(s.exited, 5000, 'the cleaned sleep')).toMatchObject({
        signal: 'SIGTERM',
      });
    for (const n of u.universe) await c.ping(n.id);
  });

  it('shrinks and grows, leaving a working universe', async () => {
    const u = await bootLocal(A);
    const c = await u.client(0);
    const removed = u.universe[1]!;
    await expect(shrinkUniverse(c, 0)).rejects.toThrow(/n0 is the node this command runs on/);
    await expect(shrinkUniverse(c, 9)).rejects.toThrow(/node n9 is not in the universe/);
    const outcomes = await shrinkUniverse(c, 1);
    expect(outcomes.every((o) => o.ok)).toBe(true);
    await waitFor('the removed lamd to exit', () => !isAlive(removed.pid));
    expect(existsSync(u.sessionDir(1))).toBe(false);
    const c2 = await u.client(2);
    expect((await c2.universe()).map((n) => n.id)).toEqual([0, 2]);
    expect((await c.universe()).map((n) => n.id)).toEqual([0, 2]);

    const env = envFor('127.0.0.2');
    const ssi = {
      params: new ParamRegistry({ env }),
      discovery: discoverModules({ staticModules: [localBootModule()] }),
    };
    const added = await growUniverse({
      ssi,
      env,
      host: '127.0.0.5',
      words: ['cpu=3'],
      client: c,
      warn: () => {},
    });
    expect(added).toMatchObject({ id: 3, name: '127.0.0.5', cpus: 3, origin: false });
    await expect(growUniverse({ ssi, env, host: '127.0.0.5', client: c })).rejects.toThrow(
      /127.0.0.5 is already in the universe as n3/,
    );
    for (const id of [0, 2]) {
      const view = await (await u.client(id)).universe();
      expect(view.map((n) => n.id)).toEqual([0, 2, 3]);
    }
    const c3 = await u.clientAt('127.0.0.5');
    expect((await c3.universe()).map((n) => n.id)).toEqual([0, 2, 3]);
    for (const id of [0, 2, 3]) await c3.ping(id);
    const r = await collect(c3, 2, ['sh', '-c', 'echo $LAM_MPI_NODE_ID']);
    expect(r.out).toBe('2\n');
    // the grown node is part of the universe lamhalt takes down
    await haltUniverse(c);
    await waitFor('every lamd to exit', () => [...u.universe, added].every((n) => !isAlive(n.pid)));
  });

  it('lamgrow and lamshrink refuse a universe its boot module fixed (noResize), saying why', async () => {
    const why = 'the batch system fixed the nodes of this job';
    const u = await bootLocal(A.slice(0, 2), { noResize: why });
    const c = await u.client(0);
    const info = JSON.parse(readFileSync(join(u.sessionDir(1), 'session.json'), 'utf8'));
    expect(info.noResize).toBe(why);
    await expect(shrinkUniverse(c, 1)).rejects.toThrow(
      `lamshrink is not supported in this universe: ${why}`,
    );
    const env = envFor('127.0.0.2');
    const ssi = {
      params: new ParamRegistry({ env }),
      discovery: discoverModules({ staticModules: [localBootModule()] }),
    };
    await expect(growUniverse({ ssi, env, host: '127.0.0.5', client: c })).rejects.toThrow(
      `lamgrow is not supported in this universe: ${why}`,
    );
    expect((await c.universe()).map((n) => n.id)).toEqual([0, 1]);
    for (const n of u.universe) expect(isAlive(n.pid)).toBe(true);
    expect(existsSync(u.sessionDir(1))).toBe(true);
  });

  it('lamhalt leaves no lamd, no started process and no session directory', async () => {
    const u = await bootLocal(A);
    const c = await u.client(1);
    const sleepers = await Promise.all(
      u.universe.map((n) => c.spawn(n.id, { argv: ['sleep', '60'] })),
    );
    const outcomes = await within(haltUniverse(c), 20_000, 'lamhalt');
    expect(outcomes.map((o) => o.ok)).toEqual([true, true, true]);
    await waitFor('every lamd and every sleep to exit', () =>
      [...u.universe.map((n) => n.pid), ...sleepers.map((s) => s.pid)].every(
        (pid) => !isAlive(pid),
      ),
    );
    expect(leftoverSessionDirs()).toEqual([]);
  });
});
