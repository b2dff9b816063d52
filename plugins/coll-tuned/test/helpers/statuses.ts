import type { CollComm } from '@ssi/mpi';

type Into = Parameters<CollComm['coll']['recv']>[0];

/**
 * lam_basic's fake world resolves receives without a status; the tuned module reads
 * `status.byteLength` of reduction operands. This view of a fake communicator answers with the
 * receive buffer's length (the fake world already rejects longer messages; shorter ones are
 * tested through the real stack, `collectives.test.ts` bad-input).
 */
export function withStatuses(comm: CollComm): CollComm {
  const inner = comm.coll;
  const coll = Object.create(inner) as CollComm['coll'];
  const full = (into: Into) => ({ byteLength: (into as ArrayBufferView).byteLength });
  Object.assign(coll, {
    recv: async (into: Into, source: number, tag: number) => {
      await inner.recv(into, source, tag);
      return full(into);
    },
    sendrecv: async (...args: Parameters<CollComm['coll']['sendrecv']>) => {
      await inner.sendrecv(...args);
      return full(args[3]);
    },
  });
  return new Proxy(comm, { get: (t, k) => (k === 'coll' ? coll : Reflect.get(t, k)) });
}
