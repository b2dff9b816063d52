import { randomBytes } from 'node:crypto';
import net from 'node:net';
import type { Proc } from '@ssi/mpi';

/**
 * Unix-domain sockets between processes of one node (`rpi_tcp_unix`, issue 18). On loopback a
 * Unix socket skips the TCP/IP stack: measured 0.77-0.81x TCP's small-message latency and
 * 1.24-2.17x its bandwidth between two polling Node processes (`tools/bench pingpong`, columns
 * `raw` and `raw-unix`). The connection protocol above the socket is the same.
 *
 * Names are Linux abstract socket names (a leading NUL byte): they live in the kernel, not in the
 * file system, so nothing is left behind when a process dies, and a name is gone the moment its
 * listener closes. Each listener's name carries the job, the rank and random bytes, so two
 * transports of one process (crtcp's reconnect, a module with two tcp paths) never share one.
 * Elsewhere (no abstract names) `rpi_tcp_unix` does nothing: every connection is TCP.
 */

/** Whether this platform has abstract Unix socket names. */
export function unixSupported(): boolean {
  return process.platform === 'linux';
}

/** A fresh abstract name for one listener of rank `grank` of job `jobId`. */
export function unixName(jobId: string, grank: number): string {
  const safeJob = jobId.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40);
  return `\0ssi-rpi-tcp-${safeJob}-${grank}-${randomBytes(6).toString('hex')}`;
}

/** A name for messages: the abstract name with its NUL shown as `@` (as `ss -x` prints it). */
export function showUnixName(name: string): string {
  return name.startsWith('\0') ? `@${name.slice(1)}` : name;
}

/**
 * Whether a dial to `peer` (listening on `unix`, if it published a name) goes over its Unix
 * socket: only when both ends allow it and the peer runs on this process's node. Nodes are the
 * run-time environment's: ranks on two node addresses of one machine (test hosts on loopback
 * addresses) talk TCP, as they would between machines.
 */
export function dialsUnix(
  me: Proc,
  peer: Proc,
  unix: string | undefined,
  enabled: boolean,
): boolean {
  return enabled && unix !== undefined && unix !== '' && peer.gps.node === me.gps.node;
}

/** Listens on the abstract name `name`; `onSocket` gets each accepted socket, paused. */
export function listenUnix(name: string, onSocket: (s: net.Socket) => void): Promise<net.Server> {
  const server = net.createServer({ pauseOnConnect: true }, onSocket);
  server.on('error', () => {});
  server.unref();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ path: name }, () => resolve(server));
  });
}
