import type { ControlDown, ControlUp } from './control-protocol';
import { checkControlType, parseControlDown } from './control-protocol';

/** Handles one type of message from mpirun. */
export type ControlHandler = (payload: unknown) => void | Promise<void>;

/**
 * A rank's side of the job control channel (`mpi.control`, `JobRuntime.control`): typed
 * messages to and from `mpirun`, for cr modules and tools. Types are namespaced strings
 * (`cr.checkpoint`, `tool.progress`), payloads msgpackr-encodable; messages keep their order in
 * each direction.
 */
export interface JobControl {
  /**
   * Sends `payload` to mpirun's handler of `type`; resolves once handed to the transport. A bad
   * type, or a send after finalize, throws at the call.
   */
  send(type: string, payload?: unknown): Promise<void>;
  /**
   * Calls `handler` for every message of `type` from mpirun; returns the function that removes
   * it. Messages that arrived before any handler of their type are kept and handed to the first
   * one (synchronously, in order), so a handler registered right after `MPI.init` misses nothing.
   */
  on(type: string, handler: ControlHandler): () => void;
  /**
   * Sends a request and resolves with mpirun's answer (what its handler returned). Rejects when
   * mpirun has no handler for `type`, its handler failed, or no answer came within `timeoutMs`.
   */
  ask<T = unknown>(type: string, payload: unknown, timeoutMs: number): Promise<T>;
}

/** Messages of one type kept for a handler that is not registered yet. */
const MAX_HELD_PER_TYPE = 256;

interface PendingAsk {
  type: string;
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * The rank's end of the channel over any transport: `post` carries a message to the hub, the
 * runtime hands every message from the hub to `deliver`. Bad messages and failing handlers go
 * to `report` (stderr of the rank by default), never to the caller.
 */
export class RankControl implements JobControl {
  private readonly handlers = new Map<string, Set<ControlHandler>>();
  private readonly held = new Map<string, unknown[]>();
  private readonly asks = new Map<number, PendingAsk>();
  private nextAsk = 0;
  private closed = false;

  constructor(
    private readonly rank: number,
    private readonly post: (msg: ControlUp) => Promise<void>,
    private readonly report: (why: string) => void,
  ) {}

  send(type: string, payload?: unknown): Promise<void> {
    checkControlType(type, 'control.send'); // bad input throws at the call, not later
    this.checkOpen('send');
    return this.post({ rank: this.rank, type, payload });
  }

  on(type: string, handler: ControlHandler): () => void {
    checkControlType(type, 'control.on');
    if (typeof handler !== 'function')
      throw new TypeError(`control.on("${type}"): the handler is not a function`);
    let set = this.handlers.get(type);
    if (!set) {
      set = new Set();
      this.handlers.set(type, set);
    }
    set.add(handler);
    const held = this.held.get(type);
    if (held) {
      this.held.delete(type);
      for (const payload of held) this.call(type, handler, payload);
    }
    return () => void set.delete(handler);
  }

  ask<T = unknown>(type: string, payload: unknown, timeoutMs: number): Promise<T> {
    checkControlType(type, 'control.ask');
    if (!(typeof timeoutMs === 'number' && timeoutMs > 0 && Number.isFinite(timeoutMs))) {
      throw new TypeError(
        `control.ask("${type}"): timeoutMs ${String(timeoutMs)} is not a positive number of milliseconds`,
      );
    }
    this.checkOpen('ask');
    const id = ++this.nextAsk;
    return new Promise<T>((resolve, reject) => {
      // A ref'd timer: the rank stays alive while it waits for the answer.
      const timer = setTimeout(() => {
        this.asks.delete(id);
        reject(new Error(`control.ask("${type}"): no answer from mpirun within ${timeoutMs} ms`));
      }, timeoutMs);
      this.asks.set(id, { type, resolve: resolve as (v: unknown) => void, reject, timer });
      this.post({ rank: this.rank, type, payload, ask: id }).catch((err: Error) => {
        this.settle(id)?.reject(
          new Error(`control.ask("${type}"): cannot reach mpirun: ${err.message}`),
        );
      });
    });
  }

  /** The transport's entry: one message from the hub, as it came off the wire. */
  deliver(data: unknown): void {
    let m: ControlDown;
    try {
      m = parseControlDown(data);
    } catch (err) {
      this.report(`ignored a control message: ${(err as Error).message}`);
      return;
    }
    if (m.replyTo !== undefined) {
      this.answer(m);
      return;
    }
    const set = this.handlers.get(m.type);
    if (set && set.size > 0) {
      for (const h of [...set]) this.call(m.type, h, m.payload);
      return;
    }
    let held = this.held.get(m.type);
    if (!held) {
      held = [];
      this.held.set(m.type, held);
    }
    if (held.length === MAX_HELD_PER_TYPE) {
      held.shift();
      this.report(
        `more than ${MAX_HELD_PER_TYPE} control messages "${m.type}" with no handler: dropped the oldest`,
      );
    }
    held.push(m.payload);
  }

  /** At finalize: pending asks fail, messages nobody handled are reported. */
  close(): void {
    this.closed = true;
    for (const id of [...this.asks.keys()]) {
      const a = this.settle(id)!;
      a.reject(new Error(`control.ask("${a.type}"): MPI finalized before mpirun answered`));
    }
    for (const [type, held] of this.held) {
      this.report(`${held.length} control message(s) "${type}" from mpirun had no handler`);
    }
    this.held.clear();
  }

  private answer(m: ControlDown): void {
    const a = this.settle(m.replyTo!);
    if (!a) {
      this.report(
        `ignored an answer to control ask ${m.replyTo} that nobody waits for (timed out?)`,
      );
      return;
    }
    if (m.error !== undefined) a.reject(new Error(`control.ask("${a.type}"): ${m.error}`));
    else a.resolve(m.payload);
  }

  private settle(id: number): PendingAsk | undefined {
    const a = this.asks.get(id);
    if (!a) return undefined;
    this.asks.delete(id);
    clearTimeout(a.timer);
    return a;
  }

  private call(type: string, handler: ControlHandler, payload: unknown): void {
    const failed = (err: unknown) =>
      this.report(
        `the handler of control message "${type}" failed: ${(err as Error)?.message ?? String(err)}`,
      );
    try {
      const result = handler(payload);
      if (result && typeof (result as Promise<void>).catch === 'function')
        (result as Promise<void>).catch(failed);
    } catch (err) {
      failed(err);
    }
  }

  private checkOpen(call: string): void {
    if (this.closed)
      throw new Error(`control.${call}: the control channel is closed (MPI finalized)`);
  }
}
