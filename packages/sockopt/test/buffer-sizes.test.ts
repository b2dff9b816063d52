import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { getBufferSizes, setBufferSizes, socketFd, sockoptAvailable } from '../src/index';

const open: net.Socket[] = [];
const servers: net.Server[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.destroy();
  for (const s of servers.splice(0)) s.close();
});

/** A connected pair over 127.0.0.1: [client, accepted]. */
async function pair(): Promise<[net.Socket, net.Socket]> {
  const server = net.createServer();
  servers.push(server);
  const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const client = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    client.once('connect', resolve);
    client.once('error', reject);
  });
  const other = await accepted;
  open.push(client, other);
  return [client, other];
}

describe('@ssi/sockopt: SO_SNDBUF / SO_RCVBUF of TCP sockets', () => {
  it('the addon is built here (the CI machine has g++, make and python3)', () => {
    expect(sockoptAvailable()).toEqual({ ok: true });
  });

  it('sets both buffers of a connected socket; the kernel reports twice the request', async () => {
    const [client, accepted] = await pair();
    const got = setBufferSizes(client, { sndbuf: 262144, rcvbuf: 131072 });
    expect(got).toEqual({ sndbuf: 2 * 262144, rcvbuf: 2 * 131072 });
    expect(getBufferSizes(client)).toEqual(got);
    // one side only: the other keeps what the kernel chose
    const before = getBufferSizes(accepted);
    const after = setBufferSizes(accepted, { rcvbuf: 65536 });
    expect(after).toEqual({ sndbuf: before.sndbuf, rcvbuf: 131072 });
  });

  it('data still flows after resizing (1 MiB through 64 KiB buffers)', async () => {
    const [client, accepted] = await pair();
    setBufferSizes(client, { sndbuf: 65536 });
    setBufferSizes(accepted, { rcvbuf: 65536 });
    const data = Buffer.alloc(1 << 20, 7);
    let got = 0;
    const done = new Promise<void>((resolve) =>
      accepted.on('data', (d: Buffer) => {
        got += d.length;
        if (got === data.length) resolve();
      }),
    );
    client.write(data);
    await done;
    expect(got).toBe(data.length);
  });

  it('refuses bad sizes and sockets without a descriptor, saying what was expected', async () => {
    const [client] = await pair();
    expect(() => setBufferSizes(client, { sndbuf: -1 })).toThrow(
      /sndbuf must be a whole number of bytes from 0 to 2147483647, got -1/,
    );
    expect(() => setBufferSizes(client, { rcvbuf: 1.5 })).toThrow(/rcvbuf must be a whole number/);
    expect(() => socketFd(new net.Socket())).toThrow(/no file descriptor/);
    client.destroy();
    expect(() => getBufferSizes(client)).toThrow(/no file descriptor/);
  });
});
