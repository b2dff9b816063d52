import type net from 'node:net';
import { ErrorClass, MpiError } from '@ssi/mpi';

/** The kernel's buffer sizes of a socket after tuning, as it reports them. */
export interface KernelBuffers {
  sndbuf: number;
  rcvbuf: number;
}

/** Sets the kernel buffers of one socket; returns what the kernel reports. */
export type SocketTuner = (socket: net.Socket) => KernelBuffers;

const MAX = 0x7fffffff;

/** Checks `rpi_tcp_sndbuf` / `rpi_tcp_rcvbuf`: 0 (the kernel decides) or a size in bytes. */
export function bufferSize(name: string, value: unknown): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > MAX) {
    throw new MpiError(
      ErrorClass.ERR_ARG,
      `${name} must be 0 (the kernel's autotuning) or a size in bytes up to ${MAX}, got "${value}"`,
    );
  }
  return n;
}

/**
 * The tuner for `rpi_tcp_sndbuf` / `rpi_tcp_rcvbuf` (null when both are 0). Node cannot set
 * SO_SNDBUF / SO_RCVBUF on TCP sockets; @ssi/sockopt's optional native addon does. Asked for
 * without it, MPI.init fails saying what is missing instead of silently ignoring the setting.
 */
export async function socketTuner(sndbuf: number, rcvbuf: number): Promise<SocketTuner | null> {
  if (sndbuf === 0 && rcvbuf === 0) return null;
  const what = 'rpi_tcp_sndbuf / rpi_tcp_rcvbuf';
  let sockopt: typeof import('@ssi/sockopt');
  try {
    sockopt = await import('@ssi/sockopt');
  } catch (err) {
    throw new MpiError(
      ErrorClass.ERR_OTHER,
      `${what} need the package @ssi/sockopt (${(err as Error).message}); install it, or set both to 0`,
    );
  }
  const available = sockopt.sockoptAvailable();
  if (!available.ok) {
    throw new MpiError(
      ErrorClass.ERR_OTHER,
      `${what} cannot be set: ${available.reason}; or set both to 0`,
    );
  }
  return (socket) => sockopt.setBufferSizes(socket, { sndbuf, rcvbuf });
}

/**
 * What the kernel gave against what was asked (Linux reports twice the request and caps it at
 * net.core.wmem_max / rmem_max): a message when a request was cut, else null.
 */
export function cappedBuffers(asked: KernelBuffers, got: KernelBuffers): string | null {
  const cut: string[] = [];
  if (asked.sndbuf > 0 && got.sndbuf < asked.sndbuf)
    cut.push(`send ${asked.sndbuf} → ${got.sndbuf}`);
  if (asked.rcvbuf > 0 && got.rcvbuf < asked.rcvbuf)
    cut.push(`receive ${asked.rcvbuf} → ${got.rcvbuf}`);
  if (cut.length === 0) return null;
  return (
    `rpi tcp: the kernel cut the socket buffers (${cut.join(', ')} bytes); raise ` +
    'net.core.wmem_max / net.core.rmem_max (sysctl) to get more'
  );
}

/**
 * The tuner for Unix-socket connections (`rpi_tcp_unix_sndbuf`): a Unix stream socket's sender
 * may queue only its SO_SNDBUF (the kernel's default, net.core.wmem_default, is 208 KiB here), so
 * a longer message takes several wake-ups of both sides; 1 MiB doubled the bandwidth of 1-4 MiB
 * messages (see the README). It is a default, not a request: without the @ssi/sockopt addon the
 * connections keep the kernel's size and `reason` says why (verbose output), nothing fails.
 */
export async function unixTuner(
  sndbuf: number,
): Promise<{ tuner: SocketTuner | null; reason: string }> {
  if (sndbuf === 0) return { tuner: null, reason: 'rpi_tcp_unix_sndbuf 0' };
  try {
    const sockopt = await import('@ssi/sockopt');
    const available = sockopt.sockoptAvailable();
    if (!available.ok) return { tuner: null, reason: available.reason };
    return { tuner: (socket) => sockopt.setBufferSizes(socket, { sndbuf, rcvbuf: 0 }), reason: '' };
  } catch (err) {
    return { tuner: null, reason: `no @ssi/sockopt (${(err as Error).message})` };
  }
}
