import { createServer } from 'node:net';
import { ShmEndpoint, ShmSegment } from '@ssi/shm';

/** The far side of the shm and TCP ping-pongs, run as `cli.js __peer <kind> <json>`. */
export async function runPeer(args: string[]): Promise<number> {
  const [kind, json] = args;
  const a = JSON.parse(json ?? '{}') as Record<string, unknown>;
  if (kind === 'tcp') return tcpEcho();
  if (kind === 'shm') return shmEcho(a);
  console.error(`unknown peer kind ${kind}`);
  return 2;
}

/** Echo every byte back, as soon as it comes (Nagle off). Quits when stdin closes. */
function tcpEcho(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer((s) => {
      s.setNoDelay(true);
      s.on('data', (d) => s.write(d));
      s.on('error', () => {});
    });
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      console.log(`PORT ${typeof addr === 'object' && addr ? addr.port : 0}`);
    });
    process.stdin.resume();
    process.stdin.on('end', () => {
      server.close();
      resolve(0);
    });
  });
}

/** Attach as index 1 and echo every message back until a 1-byte message says stop. */
async function shmEcho(a: Record<string, unknown>): Promise<number> {
  const seg = await ShmSegment.attach({
    name: a.name as string,
    job: a.job as string,
    index: 1,
    timeoutMs: 10_000,
    buffer: a.buffer as 'ab' | 'sab',
  });
  const ep = new ShmEndpoint(seg, {
    spinUs: a.spinUs as number,
    helperSpinUs: a.helperSpinUs as number | undefined,
    chunkSize: a.chunkSize as number,
  });
  const rbuf = new Uint8Array(a.maxSize as number);
  console.log('READY');
  for (;;) {
    const m = await ep.recv(0, { into: rbuf });
    if (m.data.length === 1) break;
    await ep.send(0, m.data);
  }
  await ep.send(0, new Uint8Array(1));
  ep.close();
  seg.close();
  return 0;
}
