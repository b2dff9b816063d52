import type { LamClient, OobAddress, OobMessage } from '@ssi/lam';
import { parseControlUp } from '../control/control-protocol';
import { HubControl } from '../control/hub-control';
import type { AbortMsg, FinMsg, GatherMsg, HelloMsg } from './hub-protocol';
import { HubTag } from './hub-protocol';

/** What the owner of a hub hears about the job. */
export interface HubEvents {
  /** A rank asked to end the whole job (`abort`, ERRORS_ARE_FATAL, an unhandled rejection). */
  onAbort(abort: AbortMsg): void;
  /** A rank finalized MPI. */
  onFinalized?(rank: number): void;
  /**
   * A message that does not belong to this job, is malformed, or is a control message nobody
   * handles: dropped, and said why.
   */
  onBadMessage?(why: string): void;
}

/**
 * The hub of one job (mpirun's part of Ch. 5.1.2): collects every rank's HELLO and answers with
 * the roster, collates each gather round and hands every rank all values in rank order,
 * acknowledges finalizes and reports aborts. Everything travels as OOB messages through the
 * lamds, so the hub may run in mpirun or, under `mpirun -nw`, in rank 0.
 */
export class JobHub {
  readonly addresses: (OobAddress | undefined)[];
  /** mpirun's end of the job control channel: register handlers before the ranks start. */
  readonly control: HubControl;
  readonly finalized = new Set<number>();
  private readonly rounds = new Map<number, unknown[]>();
  private readonly roundCounts = new Map<number, number>();
  private rosterSent = false;
  private stopped = false;
  /** Withdraws the hub's receives at `stop`: a later hub on the same client gets its messages. */
  private readonly receiving = new AbortController();

  constructor(
    private readonly client: LamClient,
    private readonly jobId: string,
    private readonly size: number,
    private readonly events: HubEvents,
  ) {
    this.addresses = new Array(size).fill(undefined);
    this.control = new HubControl(
      size,
      (rank, msg) =>
        void client.send(this.addresses[rank]!, HubTag.CONTROL_DOWN, msg).catch(() => {}),
      (why) => events.onBadMessage?.(why),
    );
  }

  /** Starts answering; runs until `stop` or until the lamd connection closes. */
  start(): void {
    this.serve(HubTag.HELLO, (m) => this.onHello(m));
    this.serve(HubTag.GATHER, (m) => this.onGather(m));
    this.serve(HubTag.ABORT, (m) => this.onAbort(m));
    this.serve(HubTag.FIN, (m) => this.onFin(m));
    this.serve(HubTag.CONTROL_UP, (m) => this.onControl(m));
  }

  stop(): void {
    this.stopped = true;
    this.receiving.abort();
  }

  /** Ranks that said hello (they called MPI.init). */
  get started(): number {
    return this.addresses.filter((a) => a !== undefined).length;
  }

  private serve(tag: number, handle: (m: OobMessage) => void): void {
    const loop = async () => {
      while (!this.stopped && !this.client.closed) {
        let m: OobMessage;
        try {
          m = await this.client.recv({ tag }, { signal: this.receiving.signal });
        } catch {
          return; // stopped, or the lamd connection closed: the owner hears of that on its own
        }
        if (this.stopped) return;
        try {
          handle(m);
        } catch (err) {
          this.events.onBadMessage?.((err as Error).message);
        }
      }
    };
    void loop();
  }

  private rankOf(data: unknown, what: string): number {
    const rank = (data as { rank?: unknown } | null)?.rank;
    if (typeof rank !== 'number' || !Number.isInteger(rank) || rank < 0 || rank >= this.size) {
      throw new Error(`${what} with an invalid rank ${String(rank)} (job size ${this.size})`);
    }
    return rank;
  }

  /** Only the process that said hello as a rank may speak for it. */
  private checkSender(rank: number, m: OobMessage, what: string): void {
    const a = this.addresses[rank];
    if (!a || a.node !== m.src.node || a.proc !== m.src.proc) {
      throw new Error(`${what} for rank ${rank} from n${m.src.node}:${m.src.proc}, not that rank`);
    }
  }

  private onHello(m: OobMessage): void {
    const hello = m.data as HelloMsg;
    if (hello?.jobId !== this.jobId) throw new Error(`HELLO for another job (${hello?.jobId})`);
    const rank = this.rankOf(hello, 'HELLO');
    if (this.addresses[rank]) throw new Error(`a second HELLO for rank ${rank}`);
    this.addresses[rank] = { node: m.src.node, proc: m.src.proc };
    this.control.connected(rank);
    if (this.started === this.size && !this.rosterSent) {
      this.rosterSent = true;
      this.toAll(HubTag.ROSTER, { addresses: this.addresses });
    }
  }

  private onGather(m: OobMessage): void {
    const g = m.data as GatherMsg;
    const rank = this.rankOf(g, 'GATHER');
    this.checkSender(rank, m, 'GATHER');
    if (!Number.isInteger(g.round) || g.round < 1) throw new Error(`GATHER round ${g.round}`);
    let values = this.rounds.get(g.round);
    if (!values) {
      values = new Array(this.size).fill(undefined);
      this.rounds.set(g.round, values);
    }
    values[rank] = g.value;
    const count = (this.roundCounts.get(g.round) ?? 0) + 1;
    this.roundCounts.set(g.round, count);
    if (count === this.size) {
      this.rounds.delete(g.round);
      this.roundCounts.delete(g.round);
      this.toAll(HubTag.GATHERED, { round: g.round, values });
    }
  }

  private onControl(m: OobMessage): void {
    const c = parseControlUp(m.data, this.size);
    this.checkSender(c.rank, m, `control message "${c.type}"`);
    this.control.receive(c);
  }

  private onAbort(m: OobMessage): void {
    const a = m.data as AbortMsg;
    const rank = this.rankOf(a, 'ABORT');
    this.events.onAbort({
      rank,
      code: Number.isInteger(a.code) ? a.code : 1,
      message: String(a.message ?? ''),
      peerLost: a.peerLost === true,
    });
  }

  private onFin(m: OobMessage): void {
    const rank = this.rankOf(m.data as FinMsg, 'FIN');
    this.checkSender(rank, m, 'FIN');
    this.finalized.add(rank);
    this.events.onFinalized?.(rank);
    void this.client.send(this.addresses[rank]!, HubTag.FINACK, null).catch(() => {});
  }

  private toAll(tag: number, data: unknown): void {
    for (const a of this.addresses) void this.client.send(a!, tag, data).catch(() => {});
  }
}
