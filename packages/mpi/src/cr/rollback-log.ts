import type { Proc } from '../proc';
import { ReqType, type RpiRequest } from '../rpi/request';

/** A send done since the rank's last quiet point: its destination and sequence number. */
export interface LoggedSend {
  dest: Proc;
  seq: number;
}

const NO_BYTES = new Uint8Array(0);

/**
 * A receive done since the last quiet point: what it matched, and the bytes it delivered. The
 * bytes are kept as the receive buffer and a length, and only cut out (`data`) when an image is
 * taken: the log records every completion while the rank is not quiet, an image is rare.
 */
export class LoggedRecv {
  constructor(
    readonly source: Proc,
    readonly cid: number,
    readonly rank: number,
    readonly tag: number,
    readonly kind: number,
    readonly seq: number,
    private readonly buf: Uint8Array | null,
    private readonly length: number,
  ) {}

  /** The bytes the receive delivered (a view of the receive buffer). */
  get data(): Uint8Array {
    return this.buf === null ? NO_BYTES : this.buf.subarray(0, this.length);
  }
}

/**
 * What a restarted rank must do again (the `self` module's restart contract): a restarted
 * program resumes from its last **quiet point**, the last moment it had no MPI call in progress
 * and no request it had not seen complete. Everything it did after that point is rolled back in
 * the checkpoint image: its sends are sent again (the receivers tell the sender which of them they
 * consumed for good, so those complete without being sent twice), the messages its receives took
 * go back to the unexpected queue.
 *
 * This log is what makes that possible at almost no cost: two counters, and one small record per
 * request that completes while the rank is not quiet; it is emptied at every quiet point, so a
 * program doing one blocking call at a time keeps at most one record. The receive records refer
 * to the receive buffers (no copy): between a receive's completion and the next quiet point the
 * program must not change that buffer (the README says so).
 */
export class RollbackLog {
  /** MPI calls running (entered the gate, not yet returned). */
  private calls = 0;
  /** Non-blocking requests started and not yet seen complete (wait/test) or freed. */
  private outstanding = 0;
  readonly sends: LoggedSend[] = [];
  readonly recvs: LoggedRecv[] = [];

  constructor(private readonly activeCount: () => number) {}

  get quiet(): boolean {
    return this.calls === 0 && this.outstanding === 0 && this.activeCount() === 0;
  }

  callEntered(): void {
    this.calls++;
  }

  callReturned(): void {
    this.calls--;
    this.forgetIfQuiet();
  }

  requestOpened(): void {
    this.outstanding++;
  }

  requestClosed(): void {
    if (this.outstanding > 0) this.outstanding--;
    this.forgetIfQuiet();
  }

  /** A request completed (before its owner hears of it: pooled requests are reused after). */
  completed(req: RpiRequest): void {
    const proc = req.proc;
    if (proc === null || req.cancelled || req.error !== null) return;
    if (req.type !== ReqType.RECV) this.sends.push({ dest: proc, seq: req.seq });
    else {
      this.recvs.push(
        new LoggedRecv(
          proc,
          req.cid,
          req.stSource,
          req.stTag,
          req.stKind,
          req.seq,
          req.buf,
          req.stLength,
        ),
      );
    }
    this.forgetIfQuiet();
  }

  private forgetIfQuiet(): void {
    if (this.sends.length + this.recvs.length === 0 || !this.quiet) return;
    this.sends.length = 0;
    this.recvs.length = 0;
  }
}
