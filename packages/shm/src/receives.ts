/** Receive from any peer. */
export const ANY = -1;

export interface Message {
  from: number;
  data: Uint8Array;
}

/** A posted receive, waiting for the next message from `from` (or from anyone: ANY). */
export interface Receiver {
  from: number;
  into: Uint8Array | undefined;
  /** Set when the message came before the promise existed (synchronous completion). */
  result: Message | undefined;
  error: Error | undefined;
  resolve: ((m: Message) => void) | undefined;
  reject: ((e: Error) => void) | undefined;
  timer?: NodeJS.Timeout;
}

/** Complete `r` with `m`, now or (before its promise exists) when `recv` looks again. */
export function settle(r: Receiver, m: Message): void {
  if (r.timer) clearTimeout(r.timer);
  if (r.resolve) r.resolve(m);
  else r.result = m;
}

/** Fail `r` with `e`, now or (before its promise exists) when `recv` looks again. */
export function fail(r: Receiver, e: Error): void {
  if (r.timer) clearTimeout(r.timer);
  if (r.reject) r.reject(e);
  else r.error = e;
}

interface Reader {
  resolve: () => void;
  reject: (e: Error) => void;
}

/**
 * The receiving side's queues, where complete messages meet receives in per-sender order:
 * receives posted and not yet matched (oldest first), messages that came before any receive took
 * them (kept per sender), and callers of `readable()` waiting for a kept message.
 */
export class Receives {
  private readonly posted: Receiver[] = [];
  private readonly kept: Message[][] = [];
  private readonly readers: Reader[] = [];

  constructor(nprocs: number) {
    for (let q = 0; q < nprocs; q++) this.kept.push([]);
  }

  /** Whether a posted receive waits (then only the queues, not the postboxes, hand out messages). */
  waiting(): boolean {
    return this.posted.length > 0;
  }

  /** Post a receive; `recv` completes or awaits it. */
  post(from: number, into: Uint8Array | undefined): Receiver {
    const r: Receiver = {
      from,
      into,
      result: undefined,
      error: undefined,
      resolve: undefined,
      reject: undefined,
    };
    this.posted.push(r);
    return r;
  }

  /** Whether `r` is the only posted receive (so it may take a postbox record directly). */
  isOnlyPosted(r: Receiver): boolean {
    return this.posted.length === 1 && this.posted[0] === r;
  }

  /** Withdraw every posted receive: the only one took its message directly. */
  withdrawAll(): void {
    this.posted.length = 0;
  }

  /** Withdraw `r` (its timeout); false when a message in progress already took it. */
  withdraw(r: Receiver): boolean {
    const k = this.posted.indexOf(r);
    if (k < 0) return false;
    this.posted.splice(k, 1);
    return true;
  }

  /** Hand a complete message to the first matching posted receive, or keep it. */
  deliver(m: Message): void {
    const r = this.claimFor(m.from);
    if (r === undefined) {
      this.kept[m.from]!.push(m);
      return;
    }
    const into = r.into;
    if (into && into.length >= m.data.length) {
      into.set(m.data);
      settle(r, { from: m.from, data: into.subarray(0, m.data.length) });
    } else {
      settle(r, m);
    }
  }

  /**
   * The posted receive the next message from `from` goes to, withdrawn from the posted ones;
   * undefined when none matches, or when messages kept from `from` come first (per-sender order).
   */
  claimFor(from: number): Receiver | undefined {
    if (this.kept[from]!.length > 0) return undefined;
    for (let k = 0; k < this.posted.length; k++) {
      const r = this.posted[k]!;
      if (r.from === ANY || r.from === from) return this.posted.splice(k, 1)[0]!;
    }
    return undefined;
  }

  /** The oldest kept message from `from` (ANY: from the lowest peer that has one), removed. */
  take(from: number): Message | undefined {
    if (from !== ANY) return this.kept[from]!.shift();
    for (let q = 0; q < this.kept.length; q++) {
      const m = this.kept[q]!.shift();
      if (m) return m;
    }
    return undefined;
  }

  /** Is a complete message kept for `tryRecv`? */
  hasKept(): boolean {
    for (let q = 0; q < this.kept.length; q++) if (this.kept[q]!.length > 0) return true;
    return false;
  }

  /** Is a message from `from` kept (so its postbox's next record is not its next message)? */
  keeps(from: number): boolean {
    return this.kept[from]!.length > 0;
  }

  /** Messages kept from `from`, for diagnostics. */
  keptCount(from: number): number {
    return this.kept[from]!.length;
  }

  addReader(resolve: () => void, reject: (e: Error) => void): void {
    this.readers.push({ resolve, reject });
  }

  hasReaders(): boolean {
    return this.readers.length > 0;
  }

  /** Resolve readable() once a complete message is kept (the loop drained one). */
  wakeReaders(): void {
    if (this.readers.length === 0 || !this.hasKept()) return;
    for (const r of this.readers.splice(0)) r.resolve();
  }

  /** Fail every posted receive and every reader. */
  failAll(err: Error): void {
    for (const r of this.posted.splice(0)) fail(r, err);
    for (const r of this.readers.splice(0)) r.reject(err);
  }

  /** Fail the receives posted for `from` alone (it closed with nothing left for us). */
  failFrom(from: number, err: Error): void {
    for (let k = this.posted.length - 1; k >= 0; k--) {
      const r = this.posted[k]!;
      if (r.from === from) {
        this.posted.splice(k, 1);
        fail(r, err);
      }
    }
  }

  /** The posted receives' senders, for diagnostics. */
  postedFrom(): number[] {
    return this.posted.map((r) => r.from);
  }
}
