import type { ParamRegistry } from '@ssi/core';
import { params } from './params';
import { bufferSize, socketTuner, unixTuner } from './socket-buffers';
import type { TcpSettings } from './tcp-rpi';

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
