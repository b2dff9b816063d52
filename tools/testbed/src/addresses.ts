import { createServer } from 'node:net';
import { TestbedError } from './errors';
import { dirFromSshdCmdline } from './layout';
import { listProcs, readProc, socketOwners } from './procs';
import { endpointsOf } from './sweep';

export const FIRST_AUTO_OCTET = 2;
export const LAST_OCTET = 254;

export const loopback = (octet: number) => `127.0.0.${octet}`;

/** Only addresses inside 127.0.0.0/8 are ever used by the testbed. */
export function isLoopback(address: string): boolean {
  const m = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  return !!m && m.slice(1).every((x) => Number(x) <= 255);
}

/** True when nothing listens on address:port (tries to bind it for a moment). */
export function isFree(address: string, port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EADDRINUSE') resolve(false);
      else
        reject(
          new TestbedError(
            'UNAVAILABLE',
            `cannot bind ${address}:${port} to check it is free: ${e.message}. ` +
              'The testbed needs root (port 22) and a loopback interface holding 127.0.0.0/8.',
          ),
        );
    });
    srv.listen({ host: address, port, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** Who holds address:port, for error messages. */
export function describeHolder(address: string, port: number): string {
  const endpoint = `${address}:${port}`;
  for (const p of listProcs()) {
    const dir = dirFromSshdCmdline(p.cmdline);
    if (dir && endpointsOf(dir).includes(endpoint)) {
      return (
        `the testbed in ${dir} (sshd pid ${p.pid}); stop it with \`ssi-testbed down --dir ${dir}\`, ` +
        'or clean up testbeds of crashed runs with `ssi-testbed clean` / killStrayTestbeds()'
      );
    }
  }
  for (const pid of socketOwners(new Set([endpoint, `0.0.0.0:${port}`]))) {
    const cmd = readProc(pid)?.cmdline || '?';
    return (
      `process ${pid} (${cmd}); if that is the system sshd listening on 0.0.0.0:${port}, ` +
      `stop it or run the testbed on another port (SSI_TESTBED_PORT=2222)`
    );
  }
  return 'another process';
}

/**
 * Hands out loopback addresses for one testbed. With a fixed first octet it gives exactly
 * firstOctet, firstOctet+1, …; otherwise the first free ones from 127.0.0.2 upward, skipping
 * addresses other testbeds (or anything else) hold on `port`.
 */
export class AddressAllocator {
  private cursor: number;
  private readonly given = new Set<number>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly port: number,
    private readonly fixedFirst?: number,
  ) {
    this.cursor = fixedFirst ?? FIRST_AUTO_OCTET;
  }

  get fixed(): boolean {
    return this.fixedFirst !== undefined;
  }

  /** The next address (serialized: concurrent callers never get the same one). */
  take(): Promise<string> {
    const next = this.queue.then(() => this.takeNow());
    this.queue = next.catch(() => {});
    return next;
  }

  private async takeNow(): Promise<string> {
    if (this.fixedFirst !== undefined) {
      const octet = this.cursor++;
      const address = loopback(octet);
      if (!(await isFree(address, this.port))) {
        throw new TestbedError(
          'ADDRESS_IN_USE',
          `test host address ${address}:${this.port} is already in use, by ${describeHolder(address, this.port)}. ` +
            'Omit firstAddress to let the testbed pick free addresses.',
        );
      }
      this.given.add(octet);
      return address;
    }
    for (; this.cursor <= LAST_OCTET; this.cursor++) {
      const octet = this.cursor;
      if (this.given.has(octet)) continue;
      if (await isFree(loopback(octet), this.port)) {
        this.given.add(octet);
        this.cursor++;
        return loopback(octet);
      }
    }
    throw new TestbedError(
      'ADDRESS_IN_USE',
      `no free test host address left between 127.0.0.${FIRST_AUTO_OCTET} and 127.0.0.${LAST_OCTET} on port ${this.port}. ` +
        'Testbeds of crashed runs may still be running: `ssi-testbed clean` (or killStrayTestbeds()) removes them.',
    );
  }
}
