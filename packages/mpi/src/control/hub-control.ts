import type { ControlDown, ControlUp } from './control-protocol';
import { checkControlType } from './control-protocol';

/**
 * Handles one type of message from the ranks. For an `ask`, what it returns (or resolves with)
 * is the answer; a throw or rejection becomes the asker's error.
 */
export type HubControlHandler = (rank: number, payload: unknown) => unknown;

/**
 * mpirun's side of the job control channel (the hub's `control`): messages to one rank or all,
 * handlers by type for messages and asks from the ranks. Runs over any transport: `post`
 * carries a message to a rank once it is `connected`; messages to a rank that has not started
 * MPI yet wait for it, in order. Unknown types and failing handlers go to `report` (mpirun's
 * warnings), never crash mpirun.
 */
export class HubControl {
  private readonly handlers = new Map<string, HubControlHandler>();
  private readonly waiting: (ControlDown[] | null)[];

  constructor(
    private readonly size: number,
    private readonly post: (rank: number, msg: ControlDown) => void,
    private readonly report: (why: string) => void,
  ) {
    this.waiting = Array.from({ length: size }, () => []);
  }

  /** Sends `payload` to rank `to` (or to every rank, in rank order) as a message of `type`. */
  send(to: number | 'all', type: string, payload?: unknown): void {
    checkControlType(type, 'control.send');
    if (to === 'all') {
      for (let r = 0; r < this.size; r++) this.toRank(r, { type, payload });
      return;
    }
    if (!Number.isInteger(to) || to < 0 || to >= this.size) {
      throw new RangeError(
        `control.send("${type}"): rank ${String(to)} is not a rank of this job of ${this.size} (or 'all')`,
      );
    }
    this.toRank(to, { type, payload });
  }

  /** Handles messages of `type` from every rank (one handler per type); returns its removal. */
  on(type: string, handler: HubControlHandler): () => void {
    checkControlType(type, 'control.on');
    if (typeof handler !== 'function')
      throw new TypeError(`control.on("${type}"): the handler is not a function`);
    if (this.handlers.has(type))
      throw new Error(`control.on("${type}"): "${type}" already has a handler at mpirun`);
    this.handlers.set(type, handler);
    return () => {
      if (this.handlers.get(type) === handler) this.handlers.delete(type);
    };
  }

  /** The transport's entry: rank `rank` can now be reached; what waited for it goes out. */
  connected(rank: number): void {
    const queued = this.waiting[rank];
    if (!queued) return;
    this.waiting[rank] = null;
    for (const m of queued) this.post(rank, m);
  }

  /** The transport's entry: a parsed message whose sender the transport checked. */
  receive(m: ControlUp): void {
    const handler = this.handlers.get(m.type);
    if (!handler) {
      this.report(`rank ${m.rank} sent control message "${m.type}", which has no handler here`);
      if (m.ask !== undefined) this.reply(m, undefined, `mpirun has no handler for "${m.type}"`);
      return;
    }
    const failed = (err: unknown) => {
      const why = (err as Error)?.message ?? String(err);
      if (m.ask !== undefined) this.reply(m, undefined, `mpirun's handler failed: ${why}`);
      else
        this.report(`the handler of control message "${m.type}" (rank ${m.rank}) failed: ${why}`);
    };
    let result: unknown;
    try {
      result = handler(m.rank, m.payload);
    } catch (err) {
      failed(err);
      return;
    }
    if (m.ask !== undefined) Promise.resolve(result).then((v) => this.reply(m, v), failed);
    else if (result instanceof Promise) result.catch(failed);
  }

  private reply(m: ControlUp, payload: unknown, error?: string): void {
    const answer: ControlDown = { type: m.type, payload, replyTo: m.ask };
    if (error !== undefined) answer.error = error;
    this.toRank(m.rank, answer);
  }

  private toRank(rank: number, m: ControlDown): void {
    const queued = this.waiting[rank];
    if (queued) queued.push(m);
    else this.post(rank, m);
  }
}
