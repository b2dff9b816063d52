import net from 'node:net';
import type { Proc, RpiHost } from '@ssi/mpi';
import { ErrorClass, MpiError } from '@ssi/mpi';
import type { DialTarget } from './connection';
import type { PeerAddress } from './lazy-links';
import type { TcpSettings } from './settings';
import { dialsUnix, listenUnix, showUnixName, unixName, unixSupported } from './unix-path';

/** Called with every accepted socket (paused: nothing read yet) and the listener's family. */
export type AcceptSocket = (socket: net.Socket, via: 'tcp' | 'unix') => void;

/**
 * Where this process can be reached: a TCP listener on its address (the node's, or
 * `rpi_tcp_address`) and, with `rpi_tcp_unix` on Linux, an abstract Unix socket for peers on
 * this node. Both hand their sockets to `accept`; `open` says where they listen (the address
 * the peers are told), `dialTarget` where a dial to a peer goes.
 */
export class Listeners {
  private server: net.Server | null = null;
  private unixServer: net.Server | null = null;
  private unixListenName = '';
  /** The address this process listens and dials from (set by `open`). */
  address = '';

  constructor(
    private readonly host: RpiHost,
    private readonly settings: TcpSettings,
    private readonly accept: AcceptSocket,
  ) {}

  private get myRank(): number {
    return this.host.myProc.gps.grank;
  }

  /** Listens (once per addprocs round) on this process's address; returns it for the peers. */
  async open(): Promise<PeerAddress> {
    const address = this.settings.address || this.host.myProc.host || this.host.runtime.host;
    this.address = address;
    const server = this.server ?? (await this.listenTcp(address));
    this.server = server;
    const port = (server.address() as net.AddressInfo).port;
    const unix = await this.openUnix();
    const also = unix === undefined ? '' : ` and ${showUnixName(unix)}`;
    this.host.verbose(10, `tcp: rank ${this.myRank} listening on ${address}:${port}${also}`);
    return unix === undefined ? { host: address, port } : { host: address, port, unix };
  }

  /**
   * With `rpi_tcp_unix` (on Linux), a second listener on an abstract Unix socket name for peers on
   * this node; its name travels with the TCP address. A listener that cannot be opened leaves
   * this process on TCP only (said at `rpi_verbose 0`), never fails the job.
   */
  private async openUnix(): Promise<string | undefined> {
    if (!this.settings.unix || !unixSupported()) return undefined;
    if (this.unixServer !== null) return this.unixListenName;
    const name = unixName(this.host.runtime.jobId, this.myRank);
    try {
      this.unixServer = await listenUnix(name, (socket) => this.accept(socket, 'unix'));
      this.unixListenName = name;
      return name;
    } catch (err) {
      this.host.verbose(
        0,
        `tcp: rank ${this.myRank}: no Unix socket for peers on this node (${(err as Error).message}); TCP only`,
      );
      return undefined;
    }
  }

  private listenTcp(address: string): Promise<net.Server> {
    const server = net.createServer({ pauseOnConnect: true }, (socket) => {
      this.accept(socket, 'tcp');
    });
    server.on('error', () => {});
    server.unref(); // MPI.init keeps the process alive while it waits for connections
    return new Promise((resolve, reject) => {
      server.once('error', (err) =>
        reject(
          new MpiError(
            ErrorClass.ERR_OTHER,
            `rpi tcp: cannot listen on ${address}: ${err.message}; set rpi_tcp_address`,
          ),
        ),
      );
      server.listen(0, address, () => resolve(server));
    });
  }

  /** Where a dial to `proc` at `at` goes: its Unix socket when it is on this node, else TCP. */
  dialTarget(proc: Proc, at: PeerAddress): DialTarget {
    const unix = dialsUnix(this.host.myProc, proc, at.unix, this.settings.unix) ? at.unix! : null;
    return { host: at.host, port: at.port, localAddress: this.address, unix };
  }

  /** Stops listening (both families) until the next `open`. */
  close(): void {
    this.server?.close();
    this.server = null;
    this.unixServer?.close();
    this.unixServer = null;
  }
}
