import type { CollComm } from '@ssi/mpi';

type Into = Parameters<CollComm['coll']['recv']>[0];

/**
 * lam_basic's fake world resolves receives without a status; the tuned module reads
 * `status.byteLength` of reduction operands. This view of a fake communicator answers with the
 * receive buffer's length (the fake world already rejects longer messages; shorter ones are
 * tested through the real stack, `collectives.test.ts` bad-input).
 */
export function withStatuses(comm: CollComm, sent?: { bytes: number }): CollComm {
  const inner = comm.coll;
  const coll = Object.create(inner) as CollComm['coll'];
  const full = (into: Into) => ({ byteLength: (into as ArrayBufferView).byteLength });
  // Bytes this rank sent, when the caller counts them (to tell algorithms apart).
  const count = (data: Into) => {
    if (sent) sent.bytes += (data as ArrayBufferView).byteLength;
  };
  Object.assign(coll, {
    send: (data: Into, dest: number, tag: number) => {
      count(data);
      return inner.send(data, dest, tag);
    },
    isend: (data: Into, dest: number, tag: number) => {
      count(data);
      return inner.isend(data, dest, tag);
    },
    recv: async (into: Into, source: number, tag: number) => {
      await inner.recv(into, source, tag);
      return full(into);
    },
    irecv: (into: Into, source: number, tag: number) => {
      const request = inner.irecv(into, source, tag);
      const wait = async () => {
        await request.wait();
        return full(into);
      };
      return { wait };
    },
    sendrecv: async (...args: Parameters<CollComm['coll']['sendrecv']>) => {
      count(args[0]);
      await inner.sendrecv(...args);
      return full(args[3]);
    },
  });
  return new Proxy(comm, { get: (t, k) => (k === 'coll' ? coll : Reflect.get(t, k)) });
}
