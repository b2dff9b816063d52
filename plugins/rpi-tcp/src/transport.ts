import type { Proc, RpiHost } from '@ssi/mpi';
import { tcpSettings } from './settings';
import { TcpRpi } from './tcp-rpi';
import type { TcpTransport } from './transport-api';

/**
 * Opens a tcp transport to `procs` (this process may be among them; it is skipped): the same
 * code the tcp rpi runs when it is selected, for a module that drives tcp as one of its paths.
 * Settings come from the `rpi_tcp_*` parameters (registered here if the tcp module was not
 * opened). Every process of a pair must open a transport that includes the other, in the same
 * order of `addprocs` calls: connection set-up follows the process list (Ch. 5.1.2).
 */
export async function openTcpTransport(
  host: RpiHost,
  procs: readonly Proc[],
): Promise<TcpTransport> {
  const rpi = new TcpRpi(host, await tcpSettings(host.params));
  await rpi.addprocs([...procs]);
  return rpi;
}
