import { describe, expect, it } from 'vitest';
import { ERRORS_ARE_FATAL, ERRORS_RETURN, PROC_NULL } from '../src/index';
import { soloMpi } from './helpers/loop-rpi';

/**
 * `sendrecv` into a plain buffer takes the pooled path (`p2p/sendrecv.ts`): what it must keep of
 * the general one. In one process over the loopback rpi (multi-process: the conformance suite).
 */
const mpi = soloMpi({ mpi_base_abort_on_unhandled: 0 });

describe('sendrecv into a buffer', () => {
  it('moves the data and gives the status of the receive', async () => {
    const w = mpi().COMM_WORLD;
    const out = new Int32Array([1, 2, 3]);
    const into = new Int32Array(4);
    const st = await w.sendrecv(out, 0, 7, into, 0, 7);
    expect([...into]).toEqual([1, 2, 3, 0]);
    expect({ source: st.source, tag: st.tag, bytes: st.byteLength }).toEqual({
      source: 0,
      tag: 7,
      bytes: 12,
    });
    expect(st.count).toBe(3);
  });

  it('matches the receive tag, not the first message to arrive', async () => {
    const w = mpi().COMM_WORLD;
    await w.send(new Uint8Array([9]), 0, 1); // waits, unexpected, under tag 1
    const into = new Uint8Array(1);
    const st = await w.sendrecv(new Uint8Array([5]), 0, 2, into, 0, 2);
    expect([into[0], st.tag]).toEqual([5, 2]);
    const other = new Uint8Array(1);
    await w.recv(other, 0, 1);
    expect(other[0]).toBe(9);
  });

  it('reports a message longer than the buffer as ERR_TRUNCATE through the handler', async () => {
    const w = mpi().COMM_WORLD;
    w.errhandler = ERRORS_RETURN;
    try {
      await expect(
        w.sendrecv(new Uint8Array(16), 0, 3, new Uint8Array(8), 0, 3),
      ).rejects.toMatchObject({ className: 'ERR_TRUNCATE' });
      await expect(
        w.sendrecv(new Uint8Array(1), 0, 3, new Uint8Array(1), 5, 3),
      ).rejects.toMatchObject({ className: 'ERR_RANK' });
    } finally {
      w.errhandler = ERRORS_ARE_FATAL;
    }
    const into = new Uint8Array(2);
    await w.sendrecv(new Uint8Array([4, 2]), 0, 3, into, 0, 3); // still usable afterwards
    expect([...into]).toEqual([4, 2]);
  });

  it('a send that fails leaves no receive posted to take a later message', async () => {
    const w = mpi().COMM_WORLD;
    w.errhandler = ERRORS_RETURN;
    const into = new Uint8Array(1);
    try {
      await expect(w.sendrecv(new Uint8Array(1), 3, 4, into, 0, 4)).rejects.toMatchObject({
        className: 'ERR_RANK',
      });
    } finally {
      w.errhandler = ERRORS_ARE_FATAL;
    }
    const later = new Uint8Array(1);
    await w.send(new Uint8Array([6]), 0, 4);
    await w.recv(later, 0, 4);
    expect([later[0], into[0]]).toEqual([6, 0]);
  });

  it('with PROC_NULL on both sides completes at once with the PROC_NULL status', async () => {
    const st = await mpi().COMM_WORLD.sendrecv(
      new Uint8Array(1),
      PROC_NULL,
      0,
      new Uint8Array(1),
      PROC_NULL,
      0,
    );
    expect(st.source).toBe(PROC_NULL);
  });
});
