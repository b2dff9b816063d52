import { defineModule } from '@ssi/core';
import type { RpiModule } from '@ssi/mpi';
import { THREAD_MULTIPLE, THREAD_SINGLE } from '@ssi/mpi';
import { params } from './params';
import { openTcpTransport } from './transport';

const tcp: RpiModule = defineModule({
  ssiApi: '1.0.0',
  type: 'rpi' as const,
  typeApi: '2.0.0',
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
  init(procs, _limits, host) {
    return openTcpTransport(host, procs);
  },
});

export default tcp;
export { params } from './params';
export { openTcpTransport } from './transport';
export type { TcpTraffic, TcpTransport, TcpTransportOptions } from './transport-api';
export { TCP_TRANSPORT_API } from './transport-api';
