import type { Proc, RpiHost } from '@ssi/mpi';
import { tcpSettings } from './settings';
import { TcpRpi } from './tcp-rpi';
import type { TcpTransport, TcpTransportOptions } from './transport-api';

/**
 * Opens a tcp transport to `procs` (this process may be among them; it is skipped): the same
 * code the tcp rpi runs when it is selected, for a module that drives tcp as one of its paths.
 * Settings come from the `rpi_tcp_*` parameters (registered here if the tcp module was not
 * opened). Every process of a pair must open a transport that includes the other, in the same
 * order of `addprocs` calls: connection set-up follows the process list (Ch. 5.1.2).
 * `options.lazy` overrides `rpi_tcp_lazy` (crtcp opens the eager mesh: its drain and
 * `reconnect` pair every process with every other).
 */
export async function openTcpTransport(
  host: RpiHost,
  procs: readonly Proc[],
  options: TcpTransportOptions = {},
): Promise<TcpTransport> {
  const settings = await tcpSettings(host.params);
  if (options.lazy !== undefined) settings.lazy = options.lazy;
  const rpi = new TcpRpi(host, settings);
  await rpi.addprocs([...procs]);
  return rpi;
}
