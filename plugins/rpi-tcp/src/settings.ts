import type { ParamRegistry } from '@ssi/core';
import type { RpiGather, RpiScatter } from '@ssi/mpi';
import { params } from './params';
import type { KernelBuffers, SocketTuner } from './socket-buffers';
import { bufferSize, socketTuner, unixTuner } from './socket-buffers';

/** Settings of one tcp module instance, from its parameters. */
export interface TcpSettings {
  /** Messages up to this many bytes are sent eagerly; longer ones by rendezvous. */
  short: number;
  /** Payloads up to this many bytes are copied next to their envelope (one write, no tracking). */
  copyLimit: number;
  /** Size of the shared read buffer. */
  readBuffer: number;
  /** Read size while rendezvous bodies are expected (bounds the part of a body that is copied). */
  smallRead: number;
  /** Bodies with at least this many bytes left are read straight into the receive buffer. */
  directMin: number;
  noDelay: boolean;
  /** Announce posted long receives to their sender (receiver-initiated rendezvous). */
  credits: boolean;
  /** Kernel buffer sizes asked for (0: the kernel's autotuning), and what sets them. */
  socketBuffers: KernelBuffers;
  tuneSocket: SocketTuner | null;
  /** Address to listen on; empty: the node address from the runtime. */
  address: string;
  connectTimeout: number;
  /** Connect to a peer on the first send to it (true), or to every peer in addprocs. */
  lazy: boolean;
  /** With `lazy`: a receive posted for a named peer with no connection dials it. */
  recvDial: boolean;
  /** With `lazy`: connect to itself once in MPI.init, so the first real connection runs warm code. */
  rehearse: boolean;
  /** Connect to peers on this node over a Unix-domain socket (`rpi_tcp_unix`; Linux only). */
  unix: boolean;
  /** What `tuneUnixSocket` asks for (`rpi_tcp_unix_sndbuf`). */
  unixBuffers: KernelBuffers;
  /** Sets the buffers of Unix-socket connections; null: `tuneSocket` or the kernel's. */
  tuneUnixSocket: SocketTuner | null;
  /** Why `tuneUnixSocket` is null (verbose output). */
  unixUntuned: string;
  /** Non-contiguous sends written from their ranges (`RpiActions.gather`); null: packed. */
  gather: RpiGather | null;
  /** Non-contiguous receives read into their layout (`RpiActions.scatter`); null: staged. */
  scatter: RpiScatter | null;
}

/**
 * The settings of a tcp transport from the `rpi_tcp_*` parameters. Registers them first when the
 * transport is opened by another module (crtcp, sm) rather than selected as the rpi, so that
 * `--ssi rpi_tcp_short …` and the defaults apply the same way either way.
 */
export async function tcpSettings(registry: ParamRegistry): Promise<TcpSettings> {
  for (const [name, spec] of Object.entries(params)) {
    if (!registry.isRegistered(`rpi_tcp_${name}`))
      registry.register(`rpi_tcp_${name}`, spec, 'rpi tcp');
  }
  const p = (name: keyof typeof params) => registry.get(`rpi_tcp_${name}`);
  const short = Math.max(0, Number(p('short')));
  const sndbuf = bufferSize('rpi_tcp_sndbuf', p('sndbuf'));
  const rcvbuf = bufferSize('rpi_tcp_rcvbuf', p('rcvbuf'));
  const copyLimit = Math.min(short, Math.max(0, Number(p('copy_limit'))));
  const unix = Boolean(p('unix'));
  const tuneSocket = await socketTuner(sndbuf, rcvbuf);
  // rpi_tcp_sndbuf / rcvbuf, when set, size every socket; else Unix sockets get their own size.
  const unixSndbuf = bufferSize('rpi_tcp_unix_sndbuf', p('unix_sndbuf'));
  const forUnix =
    unix && tuneSocket === null
      ? await unixTuner(unixSndbuf)
      : { tuner: null, reason: 'rpi_tcp_sndbuf / rpi_tcp_rcvbuf apply' };
  return {
    short,
    copyLimit,
    readBuffer: Math.max(4096, Number(p('read_buffer'))),
    smallRead: 4096,
    directMin: Math.max(1, Number(p('direct_min'))),
    noDelay: Boolean(p('nodelay')),
    credits: Boolean(p('credits')),
    socketBuffers: { sndbuf, rcvbuf },
    tuneSocket,
    address: String(p('address')),
    connectTimeout: Math.max(1, Number(p('connect_timeout'))),
    lazy: Boolean(p('lazy')),
    recvDial: Boolean(p('recv_dial')),
    rehearse: Boolean(p('rehearse')),
    unix,
    unixBuffers: { sndbuf: unixSndbuf, rcvbuf: 0 },
    tuneUnixSocket: forUnix.tuner,
    unixUntuned: forUnix.reason,
    // Payloads up to the copy limit go next to their envelope in one copied write: never gathered.
    gather: p('gather')
      ? {
          minBytes: Math.max(copyLimit + 1, Number(p('gather_min'))),
          minSegmentBytes: Math.max(1, Number(p('gather_range'))),
        }
      : null,
    scatter: p('scatter') ? { minBytes: Math.max(0, Number(p('scatter_min'))) } : null,
  };
}
