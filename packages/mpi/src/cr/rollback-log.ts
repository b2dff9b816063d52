import type { Proc } from '../proc';
import { ReqType, type RpiRequest } from '../rpi/request';

/** A send done since the rank's last quiet point: its destination and sequence number. */
export class LoggedSend {
  dest: Proc | null = null;
  seq = 0;
}

const NO_BYTES = new Uint8Array(0);

/**
 * A receive done since the last quiet point: what it matched, and the bytes it delivered. The
 * bytes are kept as the receive buffer and a length, and only cut out (`data`) when an image is
 * taken: the log records every completion while the rank is not quiet, an image is rare.
 */
export class LoggedRecv {
  source: Proc | null = null;
  cid = 0;
  rank = 0;
  tag = 0;
  kind = 0;
  seq = 0;
  buf: Uint8Array | null = null;
  length = 0;

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
 * program doing one blocking call at a time keeps at most one record. Records are reused from
 * one quiet point to the next (a checkpointable job that takes no checkpoint must cost next to
 * nothing, Table 7.4: no allocation per message). The receive records refer to the receive
 * buffers (no copy): between a receive's completion and the next quiet point the program must not
 * change that buffer (the README says so).
 */
export class RollbackLog {
  /** MPI calls running (entered the gate, not yet returned). */
  private calls = 0;
  /** Non-blocking requests started and not yet seen complete (wait/test) or freed. */
  private outstanding = 0;
  private readonly sendRecords: LoggedSend[] = [];
  private readonly recvRecords: LoggedRecv[] = [];
  private sendCount = 0;
  private recvCount = 0;

  constructor(private readonly activeCount: () => number) {}

  get quiet(): boolean {
    return this.calls === 0 && this.outstanding === 0 && this.activeCount() === 0;
  }

  /** The sends logged since the last quiet point, oldest first. */
  get sends(): readonly LoggedSend[] {
    return this.sendRecords.slice(0, this.sendCount);
  }

  /** The receives logged since the last quiet point, oldest first. */
  get recvs(): readonly LoggedRecv[] {
    return this.recvRecords.slice(0, this.recvCount);
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
    if (req.type !== ReqType.RECV) {
      const record = this.sendRecords[this.sendCount] ?? this.newSendRecord();
      record.dest = proc;
      record.seq = req.seq;
      this.sendCount++;
    } else {
      const record = this.recvRecords[this.recvCount] ?? this.newRecvRecord();
      record.source = proc;
      record.cid = req.cid;
      record.rank = req.stSource;
      record.tag = req.stTag;
      record.kind = req.stKind;
      record.seq = req.seq;
      record.buf = req.buf;
      record.length = req.stLength;
      this.recvCount++;
    }
    this.forgetIfQuiet();
  }

  private newSendRecord(): LoggedSend {
    const record = new LoggedSend();
    this.sendRecords.push(record);
    return record;
  }

  private newRecvRecord(): LoggedRecv {
    const record = new LoggedRecv();
    this.recvRecords.push(record);
    return record;
  }

  private forgetIfQuiet(): void {
    if (this.sendCount + this.recvCount === 0 || !this.quiet) return;
    // The records stay for reuse; the buffers they pointed at belong to the program again.
    for (let i = 0; i < this.recvCount; i++) this.recvRecords[i]!.buf = null;
    this.sendCount = 0;
    this.recvCount = 0;
  }
}
