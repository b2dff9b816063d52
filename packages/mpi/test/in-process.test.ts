import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mpi } from '../src/index';
import {
  ERRORS_ARE_FATAL,
  ERRORS_RETURN,
  Errhandler,
  ErrorClass,
  MPI,
  MpiError,
  Request,
} from '../src/index';
import { loopRpi, soloRuntime } from './helpers/loop-rpi';

/**
 * The MPI layer in one process over a loopback rpi: request life cycle, entry gate and
 * checkpoint quartet, error handlers, finalize. (Multi-process behaviour: jobs.test.ts and the
 * tcp module's conformance tests.)
 */
const loop = loopRpi({ checkpoint: true });
const solo = soloRuntime();
let mpi: Mpi;

function within<T>(p: Promise<T>, what: string, ms = 5000): Promise<T> {
  return Promise.race([
    p,
    new Promise<T>((_, reject) =>
      setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms),
    ),
  ]);
}

beforeAll(async () => {
  mpi = await MPI.init({
    runtime: solo.runtime,
    modules: [loop.module],
    ssi: { rpi: 'loop', mpi_base_abort_on_unhandled: 0 },
    searchFrom: [],
  });
});

afterAll(async () => {
  if (!MPI.finalized()) await mpi.finalize();
});

describe('MPI layer in one process', () => {
  it('initializes: rpi selected, communicators, limits lowered by the module', () => {
    expect(MPI.initialized()).toBe(true);
    expect(mpi.rpi).toEqual({ name: 'loop', version: '1.0.0' });
    expect(mpi.COMM_WORLD.size).toBe(1);
    expect(mpi.COMM_SELF.size).toBe(1);
    expect(mpi.maxTag).toBe(65535);
    expect(solo.gathers()).toBe(1); // the GPS exchange
  });

  it('moves requests through init → start → done and back for persistent ones', async () => {
    const w = mpi.COMM_WORLD;
    const out = new Int32Array([1, 2, 3]);
    const inn = new Int32Array(3);
    const s = w.sendInit(out, 0, 4);
    const r = w.recvInit(inn, 0, 4);
    expect(s.active).toBe(false);
    for (let i = 0; i < 5; i++) {
      out[0] = i;
      r.start();
      expect(r.active).toBe(true);
      expect(r.test()).toBe(false);
      s.start();
      const [st] = await within(Request.waitall([r, s]), 'a persistent exchange');
      expect(st?.count).toBe(3);
      expect(inn[0]).toBe(i);
      expect(r.active).toBe(false);
    }
    w.errhandler = ERRORS_RETURN;
    r.start();
    expect(() => r.start()).toThrow(/still active/);
    r.cancel();
    expect((await r.wait()).cancelled).toBe(true);
    s.free();
    r.free();
    await expect(r.wait()).rejects.toThrow(/freed/);
    w.errhandler = ERRORS_ARE_FATAL;
  });

  it('completes a freed active request without anyone waiting (orphan)', async () => {
    const w = mpi.COMM_WORLD;
    const r = w.irecv(0, 9);
    r.free();
    await w.send('x', 0, 9);
    expect(w.iprobe(0, 9)).toBeUndefined(); // the orphan took it
  });

  it('gates MPI calls during a checkpoint and runs them afterwards in call order', async () => {
    const w = mpi.COMM_WORLD;
    const hooks = mpi.checkpointHooks;
    expect(hooks.supported).toBe(true);
    loop.log.length = 0;
    await hooks.interrupt();
    await hooks.checkpoint();
    const recv = w.irecv(0, 21); // created now, started when the gate opens
    const sent = w.send('first', 0, 21);
    const second = w.isend('second', 0, 22);
    const got = w.recv(0, 22);
    await new Promise((r) => setTimeout(r, 20));
    expect(loop.log).toEqual(['interrupt', 'checkpoint']);
    expect(recv.test()).toBe(false);
    await hooks.continue();
    expect(loop.log).toEqual([
      'interrupt',
      'checkpoint',
      'continue',
      'build recv tag 21',
      'build send tag 21',
      'build send tag 22',
      'build recv tag 22',
    ]);
    await within(sent, 'the gated send');
    expect(await within(recv.wait(), 'the gated receive')).toBe('first');
    expect(await within(got, 'the gated blocking receive')).toBe('second');
    await second.wait();
    await hooks.interrupt();
    await hooks.restart();
    expect(loop.log.slice(-2)).toEqual(['interrupt', 'restart']);
  });

  it('holds a cancel at the entry gate during a checkpoint, then applies it in call order', async () => {
    const w = mpi.COMM_WORLD;
    const hooks = mpi.checkpointHooks;
    const early = w.irecv(new Uint8Array(4), 0, 31); // posted before the checkpoint
    await hooks.interrupt();
    early.cancel();
    const held = w.irecv(new Uint8Array(4), 0, 32); // started while held ...
    held.cancel(); // ... and cancelled while held: the cancel follows the start
    await new Promise((r) => setTimeout(r, 20));
    expect(early.test()).toBe(false); // the cancel has not reached the library yet
    expect(held.test()).toBe(false);
    await hooks.checkpoint();
    await hooks.continue();
    const st = await within(early.wait(), 'the cancelled early receive');
    expect(st.cancelled).toBe(true);
    expect((await within(held.wait(), 'the cancelled held receive')).cancelled).toBe(true);
    w.send(new Uint8Array(4), 0, 31); // nothing is waiting for it any more: it stays unexpected
    expect(w.iprobe(0, 31)?.tag).toBe(31);
    await w.recv(new Uint8Array(4), 0, 31);
  });

  it('lists the live communicators: predefined, built, and no longer the freed ones', async () => {
    const w = mpi.COMM_WORLD;
    expect(mpi.communicators()).toEqual([w, mpi.COMM_SELF]);
    const dup = await w.dup('registry.dup');
    const split = await w.split(0, 0, 'registry.split');
    expect(mpi.communicators().map((c) => c.name)).toEqual([
      'COMM_WORLD',
      'COMM_SELF',
      'registry.dup',
      'registry.split',
    ]);
    await dup.free();
    expect(mpi.communicators()).toEqual([w, mpi.COMM_SELF, split]);
    await split!.free();
    expect(mpi.communicators()).toEqual([w, mpi.COMM_SELF]);
    // twins of a communicator (its collective context) are not communicators of their own
    expect(w.coll).not.toBe(w);
    expect(mpi.communicators()).toHaveLength(2);
  });

  it('raises MPI error classes through the error handler', async () => {
    const w = mpi.COMM_WORLD;
    w.errhandler = ERRORS_RETURN;
    await expect(w.send(1, 1, 0)).rejects.toMatchObject({
      errorClass: ErrorClass.ERR_RANK,
      code: 'ERR_RANK',
    });
    await expect(w.send(1, 0, 70000)).rejects.toMatchObject({ className: 'ERR_TAG' });
    expect(() => w.irecv(new Uint8Array(1), 3)).toThrow(MpiError);
    const seen: string[] = [];
    w.errhandler = Errhandler.create((comm, err) => seen.push(`${comm.name}: ${err.className}`));
    await expect(w.recv(5, 0)).rejects.toThrow(/invalid source rank 5/);
    expect(seen).toEqual(['COMM_WORLD: ERR_RANK']);
    w.errhandler = ERRORS_ARE_FATAL;
  });

  it('turns an error under ERRORS_ARE_FATAL into a job abort naming rank, communicator and call', async () => {
    const w = mpi.COMM_SELF;
    void w.ssend('x', 2, 0).catch(() => {});
    await new Promise((r) => setTimeout(r, 10));
    expect(solo.aborts).toHaveLength(1);
    expect(solo.aborts[0]!.code).toBe(ErrorClass.ERR_RANK);
    expect(solo.aborts[0]!.message).toMatch(/rank 0 in COMM_SELF\.ssend: ERR_RANK/);
    expect(solo.aborts[0]!.message).toMatch(/ERRORS_ARE_FATAL/);
  });

  it('finalizes: synchronizes through the runtime and shuts the module down', async () => {
    const before = solo.gathers();
    await mpi.finalize();
    expect(solo.gathers()).toBe(before + 1);
    expect(loop.log.at(-1)).toBe('finalize');
    expect(MPI.finalized()).toBe(true);
    await expect(MPI.init({ runtime: solo.runtime })).rejects.toThrow(
      /already initialized|cannot restart/,
    );
  });
});
