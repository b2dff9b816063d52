import { defineModule } from '@ssi/core';
import type { RpiModule } from '@ssi/mpi';
import { ErrorClass, MpiError, THREAD_MULTIPLE, THREAD_SINGLE } from '@ssi/mpi';
import { openTcpTransport, type TcpTransport } from '@ssi/rpi-tcp';
import { CrtcpRpi, type CrtcpState } from './crtcp-rpi';
import { params } from './params';

/** The tcp module this one is built on (also in the manifest). */
const requires = [{ type: 'rpi', name: 'tcp', version: '1.0', package: '@ssi/rpi-tcp' }];
/** crtcp needs `holdWrites`, `whenFlushed` and `reconnect`: tcp's transport surface 1.1 or later. */
const TRANSPORT_MINOR = 1;

/** The crtcp instance of this process (one rpi per process), for `crtcpState`. */
let current: CrtcpRpi | null = null;

/**
 * The crtcp rpi of this process, for reports and tests: its phase, the last checkpoint's drain
 * (what was on the wire: bytes, messages, per peer) and its connections' counters. Null when
 * crtcp is not the selected rpi here.
 */
export function crtcpState(): CrtcpState | null {
  return current;
}

function checkTransport(t: TcpTransport): void {
  const [major, minor] = String(t.transportApi ?? '0.0')
    .split('.')
    .map(Number);
  if (major !== 1 || (minor ?? 0) < TRANSPORT_MINOR) {
    throw new MpiError(
      ErrorClass.ERR_OTHER,
      `rpi crtcp: needs the tcp transport surface 1.${TRANSPORT_MINOR} or later (holdWrites, ` +
        `whenFlushed, reconnect); the installed @ssi/rpi-tcp offers ${t.transportApi ?? 'none'}: update it`,
    );
  }
}

const crtcp: RpiModule = defineModule({
  ssiApi: '1.0.0',
  type: 'rpi' as const,
  typeApi: '2.0.0',
  name: 'crtcp',
  version: '1.0.0',
  requires,
  params,
  query(ctx) {
    return {
      priority: ctx.params.get<number>('rpi_crtcp_priority'),
      threadMin: THREAD_SINGLE,
      threadMax: THREAD_MULTIPLE,
    };
  },
  async init(procs, _limits, host) {
    // Opened through the framework for its parameters and version; the transport is the eager
    // mesh whatever rpi_tcp_lazy says: the drain and reconnect pair every process with every other.
    await host.openModule('tcp');
    const transport = await openTcpTransport(host, procs, { lazy: false });
    checkTransport(transport);
    const timeout = Math.max(1, host.params.get<number>('rpi_crtcp_drain_timeout'));
    current = new CrtcpRpi(transport, host, timeout);
    return current;
  },
});

export default crtcp;
export type { CrtcpPhase, CrtcpState } from './crtcp-rpi';
export type { DrainReport, PeerDrain } from './drain-report';
export { describeDrain } from './drain-report';
export { params } from './params';
