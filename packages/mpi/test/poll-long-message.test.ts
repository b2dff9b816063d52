import { describe, expect, it } from 'vitest';
import { DataKind, MessageHeader } from '../src/index';
import type { WaitPoller } from '../src/progress/wait-poller';
import { soloMpiOverLoop } from './helpers/loop-rpi';

/**
 * The progress engine's polling while a long message arrives (issue 18): when an rpi hands the
 * MPI layer the envelope of a long message that a waiting receive matches, the event loop keeps
 * polling for the message's transfer time, although the receive's own window is over (else the
 * receiver sleeps between the chunks of the body). `mpi_base_poll_us` is set, so that the
 * machine's load cannot turn polling off.
 */
const { mpi: world, loop } = soloMpiOverLoop({ mpi_base_poll_us: 1000 });

/** The engine's poller (the rpi host is the engine). */
const poller = () => (loop.host() as unknown as { poller: WaitPoller }).poller;

/** The envelope of a message from rank 0 of COMM_WORLD, as an rpi hands it over. */
function header(tag: number, length: number): MessageHeader {
  const h = new MessageHeader();
  h.cid = world().COMM_WORLD.cid;
  h.rank = 0;
  h.tag = tag;
  h.length = length;
  h.kind = DataKind.UINT8; // what a Uint8Array send carries
  return h;
}

describe('polling while a long message arrives', () => {
  it('polls again for the transfer time of a long message a waiting receive matched', async () => {
    const host = loop.host();
    const size = 4 * 1024 * 1024; // 4 ms of transfer at the assumed 1 GB/s
    const r = world().COMM_WORLD.irecv(new Uint8Array(size), 0, 41);
    const done = r.wait();
    await new Promise((resolve) => setTimeout(resolve, 50)); // the 1 ms window is over
    expect(poller().polling).toBe(false);
    const req = host.matchPosted(host.myProc, header(41, size));
    expect(req).not.toBeNull();
    expect(poller().polling).toBe(true);
    host.complete(req!); // the body arrived
    expect((await done).count).toBe(size);
  });

  it('polls for the transfer time of what a receive buffer holds while the receive waits', async () => {
    const size = 64 * 1024 * 1024; // 67 ms at the assumed 1 GB/s
    const r = world().COMM_WORLD.irecv(new Uint8Array(size), 0, 43);
    const done = r.wait();
    await new Promise((resolve) => setTimeout(resolve, 20)); // past the 1 ms window
    expect(poller().polling).toBe(true);
    const host = loop.host();
    host.complete(host.matchPosted(host.myProc, header(43, 8))!);
    expect((await done).count).toBe(8);
  });

  it('does not for a short message (it arrives with its envelope)', async () => {
    const host = loop.host();
    const r = world().COMM_WORLD.irecv(new Uint8Array(64), 0, 42);
    const done = r.wait();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(poller().polling).toBe(false);
    const req = host.matchPosted(host.myProc, header(42, 64));
    expect(poller().polling).toBe(false);
    host.complete(req!);
    expect((await done).count).toBe(64);
  });
});
