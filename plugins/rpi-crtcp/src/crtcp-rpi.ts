import type { Proc, RpiActions, RpiHost, RpiRequest, UnexpectedMessage } from '@ssi/mpi';
import { ErrorClass, MpiError } from '@ssi/mpi';
import type { TcpTransport } from '@ssi/rpi-tcp';
import { drain, markReads, type ReadMark } from './drain';
import { type DrainReport, describeDrain } from './drain-report';

/** Where a process stands in the checkpoint phases (Ch. 7.2). */
export type CrtcpPhase = 'running' | 'interrupted' | 'drained';

/** What `crtcpState()` shows of the crtcp instance of this process. */
export interface CrtcpState {
  readonly phase: CrtcpPhase;
  /** The last checkpoint's drain, or null before the first. */
  readonly lastDrain: DrainReport | null;
  /** How many times `restart` set up new connections. */
  readonly restarts: number;
  /** The tcp transport's counters for a peer (world rank); `connection` grows by one per restart. */
  traffic(peer: number): ReturnType<TcpTransport['traffic']>;
}

/**
 * The crtcp rpi: every action of the tcp transport, forwarded unchanged (a checkpoint that is
 * not taken costs one forwarding call), plus the checkpoint quartet (App. C.2.16-19) built on
 * the transport's public surface: hold writes, drain by byte counters, release or reconnect.
 */
export class CrtcpRpi implements RpiActions, CrtcpState {
  phase: CrtcpPhase = 'running';
  lastDrain: DrainReport | null = null;
  restarts = 0;
  private mark: ReadMark | null = null;

  constructor(
    private readonly tcp: TcpTransport,
    private readonly host: RpiHost,
    private readonly timeoutMs: number,
  ) {}

  // ---- tcp's actions, forwarded -------------------------------------------------------------

  addprocs(procs: Proc[]): Promise<void> {
    return this.tcp.addprocs(procs);
  }
  finalize(proc?: Proc): Promise<void> {
    return this.tcp.finalize(proc);
  }
  build(req: RpiRequest): void {
    this.tcp.build(req);
  }
  start(req: RpiRequest): void {
    this.tcp.start(req);
  }
  matched(req: RpiRequest, msg: UnexpectedMessage): void {
    this.tcp.matched(req, msg);
  }
  posted(req: RpiRequest): void {
    this.tcp.posted?.(req);
  }
  unposted(req: RpiRequest): void {
    this.tcp.unposted?.(req);
  }
  advance(block: boolean): boolean | Promise<boolean> {
    return this.tcp.advance(block);
  }
  destroy(req: RpiRequest): void {
    this.tcp.destroy(req);
  }
  cancel(req: RpiRequest): void {
    this.tcp.cancel(req);
  }
  fastsend(req: RpiRequest): boolean {
    return this.tcp.fastsend!(req);
  }

  traffic(peer: number): ReturnType<TcpTransport['traffic']> {
    const proc = this.tcp.peers.find((p) => p.gps.grank === peer);
    if (proc === undefined) {
      throw new MpiError(
        ErrorClass.ERR_RANK,
        `rpi crtcp: traffic(${peer}): no connection to rank ${peer} (peers: ` +
          `${this.tcp.peers.map((p) => p.gps.grank).join(', ') || 'none'})`,
      );
    }
    return this.tcp.traffic(proc);
  }

  // ---- the checkpoint quartet -----------------------------------------------------------------

  private expect(phase: CrtcpPhase, call: string, first: string): void {
    if (this.phase !== phase) {
      throw new MpiError(
        ErrorClass.ERR_OTHER,
        `rpi crtcp: ${call}() called while ${this.phase}; ${first} first`,
      );
    }
  }

  /**
   * Nothing new starts on the wire from here on: the entry gate is closed (no MPI call), and the
   * transport holds every write its protocol would start by itself (answers to what still
   * arrives), so the byte counts stop moving. Reading goes on.
   */
  async interrupt(): Promise<void> {
    this.expect('running', 'interrupt', 'continue or restart');
    this.tcp.holdWrites();
    this.mark = markReads(this.tcp);
    this.phase = 'interrupted';
  }

  /** The drain (Fig. 7.8): afterwards no byte of the job is on any wire. */
  async checkpoint(): Promise<void> {
    this.expect('interrupted', 'checkpoint', 'interrupt');
    const report = await drain(this.tcp, this.host.runtime, this.mark!, this.timeoutMs);
    this.lastDrain = report;
    this.phase = 'drained';
    this.host.verbose(1, describeDrain(report));
  }

  /**
   * The job goes on: what was held is written, in order. Also straight after `interrupt`, when
   * the checkpoint is called off before the drain (a rank could not be interrupted: the cr base
   * retreats and tries again later).
   */
  async continue(): Promise<void> {
    if (this.phase !== 'interrupted') this.expect('drained', 'continue', 'checkpoint');
    this.tcp.releaseWrites();
    this.phase = 'running';
  }

  /**
   * The process was restored from its image (the job may run elsewhere now): new connections
   * with the processes' current addresses replace the old ones, then what was held is written.
   */
  async restart(): Promise<void> {
    this.expect('drained', 'restart', 'checkpoint');
    await this.tcp.reconnect();
    this.restarts++;
    this.tcp.releaseWrites();
    this.phase = 'running';
    this.host.verbose(
      1,
      `crtcp: rank ${this.host.runtime.rank} reconnected to ${this.tcp.peers.length} peers`,
    );
  }
}
