import type { ParamSpec } from '@ssi/core';
import { defineModule } from '@ssi/core';
import type { RpiModule } from '@ssi/mpi';
import { THREAD_MULTIPLE, THREAD_SINGLE } from '@ssi/mpi';
import { bufferSize, socketTuner } from './socket-buffers';
import { TcpRpi } from './tcp-rpi';

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
    help: 'Milliseconds to wait for a peer address or connection during MPI.init before failing',
  },
} satisfies Record<string, ParamSpec>;

const tcp: RpiModule = defineModule({
  ssiApi: '1.0.0',
  type: 'rpi' as const,
  // A literal, equal to the manifest's: the API this module was built for, not the host's.
  typeApi: '1.1.0',
  name: 'tcp',
  version: '1.0.0',
  params,
  query(ctx) {
    return {
      priority: ctx.params.get<number>('rpi_tcp_priority'),
      threadMin: THREAD_SINGLE,
      threadMax: THREAD_MULTIPLE,
    };
  },
  async init(procs, _limits, host) {
    const p = (name: keyof typeof params) => host.params.get(`rpi_tcp_${name}`);
    const short = Math.max(0, Number(p('short')));
    const sndbuf = bufferSize('rpi_tcp_sndbuf', p('sndbuf'));
    const rcvbuf = bufferSize('rpi_tcp_rcvbuf', p('rcvbuf'));
    const rpi = new TcpRpi(host, {
      short,
      copyLimit: Math.min(short, Math.max(0, Number(p('copy_limit')))),
      readBuffer: Math.max(4096, Number(p('read_buffer'))),
      smallRead: 4096,
      directMin: Math.max(1, Number(p('direct_min'))),
      noDelay: Boolean(p('nodelay')),
      credits: Boolean(p('credits')),
      socketBuffers: { sndbuf, rcvbuf },
      tuneSocket: await socketTuner(sndbuf, rcvbuf),
      address: String(p('address')),
      connectTimeout: Math.max(1, Number(p('connect_timeout'))),
    });
    await rpi.addprocs(procs);
    return rpi;
  },
});

export default tcp;
export { TcpRpi };
