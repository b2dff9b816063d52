import type { Connection } from './connection';
import type { TcpSettings } from './settings';
import { cappedBuffers } from './socket-buffers';

/**
 * Sets the kernel buffers of each established connection: `rpi_tcp_sndbuf` / `rpi_tcp_rcvbuf`
 * if asked to, else `rpi_tcp_unix_sndbuf` for a Unix-socket connection, and says what the
 * kernel granted (`rpi_verbose 10`). A request the kernel cut is warned about once per transport
 * (said only at verbose level for the Unix default, which most machines cut).
 */
export class ConnectionTuner {
  private warnedCapped = false;

  constructor(
    private readonly settings: TcpSettings,
    private readonly verbose: (level: number, message: string) => void,
  ) {}

  tune(conn: Connection): void {
    const s = this.settings;
    const unix = conn.via === 'unix' && s.tuneUnixSocket !== null;
    const tune = unix ? s.tuneUnixSocket : s.tuneSocket;
    const peer = conn.proc!.describe();
    if (tune === null) {
      if (conn.via === 'unix' && s.unixUntuned !== '')
        this.verbose(10, `tcp: socket to ${peer}: kernel's buffers (${s.unixUntuned})`);
      return;
    }
    try {
      const got = tune(conn.socket);
      this.verbose(
        10,
        `tcp: socket to ${peer}: kernel buffers send ${got.sndbuf}, receive ${got.rcvbuf} bytes`,
      );
      const cut = cappedBuffers(unix ? s.unixBuffers : s.socketBuffers, got);
      // rpi_tcp_unix_sndbuf is a default, cut on most machines (wmem_max): said, not warned.
      if (cut !== null && unix) this.verbose(10, cut);
      else if (cut !== null && !this.warnedCapped) {
        this.warnedCapped = true;
        process.emitWarning(cut, 'SsiWarning');
      }
    } catch (err) {
      // The socket went away meanwhile: its close is reported as usual.
      this.verbose(10, `tcp: socket to ${peer}: buffers not set: ${(err as Error).message}`);
    }
  }
}
