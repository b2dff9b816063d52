import type { ParamSpec } from '@ssi/core';

/** The module's parameters (`rpi_tcp_<name>`), with defaults and help as `laminfo` shows them. */
export const params = {
  priority: {
    type: 'int',
    default: 20,
    help: 'Priority of the tcp rpi module (0-100); the highest-priority module that can run is selected',
  },
  short: {
    type: 'int',
    default: 65536,
    help: 'Messages up to this many bytes are sent eagerly; longer ones use the rendezvous protocol',
  },
  copy_limit: {
    type: 'int',
    default: 16384,
    help: 'Payloads up to this many bytes are copied next to their envelope and sent in one write (the send completes at once)',
  },
  read_buffer: {
    type: 'int',
    default: 262144,
    help: 'Bytes of the read buffer envelopes and eager payloads are read into while messages come in bursts (large bodies are read straight into the receive buffer)',
  },
  sndbuf: {
    type: 'int',
    default: 0,
    help: 'Kernel send buffer of every socket (SO_SNDBUF) in bytes; 0: the kernel autotunes it. Needs the native addon of @ssi/sockopt',
  },
  rcvbuf: {
    type: 'int',
    default: 0,
    help: 'Kernel receive buffer of every socket (SO_RCVBUF) in bytes; 0: the kernel autotunes it. Needs the native addon of @ssi/sockopt',
  },
  direct_min: {
    type: 'int',
    default: 16384,
    help: 'A body with at least this many bytes left is read straight into the posted receive buffer',
  },
  credits: {
    type: 'boolean',
    default: true,
    help: 'Tell the sender when a receive longer than rpi_tcp_short is posted first, so that its message comes at once instead of by request to send and clear to send',
  },
  nodelay: {
    type: 'boolean',
    default: true,
    help: 'Set TCP_NODELAY on every socket (no Nagle delay for small messages)',
  },
  address: {
    type: 'string',
    default: '',
    help: 'Address to listen and connect from; empty: the node address the run-time environment gives',
  },
  connect_timeout: {
    type: 'int',
    default: 30000,
    help: 'Milliseconds to wait for a peer address or connection (during MPI.init, or after the first send to a peer with rpi_tcp_lazy) before failing',
  },
  lazy: {
    type: 'boolean',
    default: true,
    help: 'Connect to a peer on the first message to it (addresses are exchanged at MPI.init; a peer never spoken to is never connected); 0: connect every pair during MPI.init (the full mesh)',
  },
  recv_dial: {
    type: 'boolean',
    default: true,
    help: 'With rpi_tcp_lazy: a receive posted for a named source with no connection yet dials that source, so that its first message finds the connection up (the later process of the pair keeps its dial when both dial); 0: only sends dial',
  },
  rehearse: {
    type: 'boolean',
    default: true,
    help: "With rpi_tcp_lazy: in MPI.init, while the addresses are exchanged, connect once to this process's own listener (authenticated like any peer) and close again, so that the first connection to a peer runs code that has run before (the first run of the connection code in a process cost 1-2 ms); 0: no rehearsal",
  },
  unix: {
    type: 'boolean',
    default: true,
    help: 'Connect to peers on the same node over a Unix-domain socket (Linux abstract names; falls back to TCP if that dial fails); 0: TCP for every peer',
  },
  unix_sndbuf: {
    type: 'int',
    default: 1048576,
    help: 'Kernel send buffer (SO_SNDBUF) of Unix-socket connections in bytes, unless rpi_tcp_sndbuf is set; 0: the kernel default (208 KiB here). Needs the native addon of @ssi/sockopt, else the kernel default is kept',
  },
  gather: {
    type: 'boolean',
    default: true,
    help: "Write a non-contiguous send (a derived datatype) straight from the ranges of the user's buffer, gathered by one writev, instead of a packed copy; 0: the MPI layer packs every such send",
  },
  gather_min: {
    type: 'int',
    default: 65536,
    help: 'Non-contiguous sends shorter than this many bytes are packed, not gathered (never fewer than rpi_tcp_copy_limit + 1: those are copied next to their envelope anyway)',
  },
  gather_range: {
    type: 'int',
    default: 65536,
    help: 'Non-contiguous sends whose ranges are shorter than this many bytes on average are packed, not gathered (a write per range costs more than copying short ones)',
  },
  scatter: {
    type: 'boolean',
    default: true,
    help: "Read a non-contiguous receive (a derived datatype) into the user's layout as its bytes arrive (chunks of the read buffer unpacked in place, long contiguous runs read into directly), instead of into a staging copy of the whole message unpacked afterwards; 0: every such receive is staged",
  },
  scatter_min: {
    type: 'int',
    default: 0,
    help: 'Non-contiguous receives shorter than this many bytes are staged and unpacked at the end, not scattered',
  },
} satisfies Record<string, ParamSpec>;
