import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { ParamRegistry } from '@ssi/core';
import { isLamError, LamError, lamFailureName } from '../errors';
import { lamInt, lamSeconds } from '../params';
import { readSecret } from '../session/secret';
import { findSessionDir, SESSION_FILES } from '../session/session-dir';
import type { UniverseNode } from '../universe';
import { type Connection, type ConnectTarget, connectTo } from '../wire/connection';
import type { ExitStatus, LamdOp, OpArgs, OpResult, SpawnRequest } from '../wire/ops';
import type { OobAddress, WireMessage } from '../wire/wire';
import { RemoteProcess } from './remote-process';

export interface LamClientOptions {
  /** default: found as `findSessionDir` describes (LAM_MPI_SESSION_DIR, _HOST, host name) */
  sessionDir?: string;
  env?: Record<string, string | undefined>;
  /** where lam_client_timeout and friends are read; default: from the environment */
  params?: ParamRegistry;
  /** the OOB process id to attach as (an MPI process uses its pid); default: the lamd picks one */
  proc?: number | null;
  /** what this client is, for the lamd's log: "lamnodes", "mpirun", "rank 3" */
  name?: string;
  /** connect over TCP to a lamd (another node's, or during a boot) instead of the local socket */
  tcp?: { host: string; port: number; secret: Buffer };
}

/** An out-of-band message as received. */
export interface OobMessage {
  src: OobAddress;
  tag: number;
  data: unknown;
}

/** Which message `recv` takes: from whom (node and/or proc), with which tag. */
export interface RecvFilter {
  from?: Partial<OobAddress>;
  tag?: number;
}

interface Pending {
  node: number;
  what: string;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer?: NodeJS.Timeout;
}

interface RecvWaiter {
  filter: RecvFilter;
  resolve: (m: OobMessage) => void;
  reject: (err: Error) => void;
  timer?: NodeJS.Timeout;
}

type Ev = Extract<WireMessage, { t: 'ev' }>;
const MAX_UNCLAIMED = 10_000;

/**
 * The client library of the run-time environment: what the tools, mpirun and MPI processes use
 * to talk to their lamd. Every call is a Promise; every wait is bounded by lam_client_timeout
 * (recv: by the caller's timeout) and fails at once when the lamd it depends on is lost.
 *
 * Events: `node-lost` (node: number, reason: string), `close` (reason: string).
 */
export class LamClient extends EventEmitter {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly inbox: OobMessage[] = [];
  private recvWaiters: RecvWaiter[] = [];
  private readonly processes = new Map<string, RemoteProcess>();
  private readonly unclaimed = new Map<string, Ev[]>();
  private attached: { node: number; proc: number } | undefined;
  private closedError: LamError | undefined;
  private readonly timeoutMs: number;
  private welcome!: { resolve: () => void; reject: (e: Error) => void };

  private constructor(
    private readonly conn: Connection,
    readonly sessionDir: string | undefined,
    params: ParamRegistry,
  ) {
    super();
    this.timeoutMs = lamSeconds(params, 'lam_client_timeout');
    conn.on('message', (m: WireMessage) => this.onMessage(m));
    conn.on('close', (reason?: string) => this.onClose(reason));
  }

  /** Connects to the lamd of this node (or the one `tcp` names) and attaches. */
  static async connect(options: LamClientOptions = {}): Promise<LamClient> {
    const env = options.env ?? process.env;
    const params = options.params ?? new ParamRegistry({ env });
    const connectMs = lamSeconds(params, 'lam_connect_timeout');
    let target: ConnectTarget;
    let secret: Buffer;
    let sessionDir: string | undefined;
    let what: string;
    if (options.tcp) {
      target = { host: options.tcp.host, port: options.tcp.port };
      secret = options.tcp.secret;
      what = `the lamd at ${options.tcp.host}:${options.tcp.port}`;
    } else {
      sessionDir = options.sessionDir ?? findSessionDir(env);
      secret = readSecret(sessionDir);
      target = { path: join(sessionDir, SESSION_FILES.socket) };
      what = `the lamd of this node (${sessionDir})`;
    }
    let conn: Connection;
    try {
      conn = await connectTo(target, {
        secret,
        timeoutMs: connectMs,
        maxFrame: lamInt(params, 'lam_max_frame'),
        what,
        timeoutParam: 'lam_connect_timeout',
      });
    } catch (err) {
      if (isLamError(err, 'UNREACHABLE') && sessionDir) {
        throw new LamError(
          'NO_UNIVERSE',
          `no lamd answers in ${sessionDir} (it may have died); run wipe to clean up, then lamboot`,
        );
      }
      throw err;
    }
    const client = new LamClient(conn, sessionDir, params);
    await client.hello(options.proc ?? null, options.name ?? 'client', connectMs);
    return client;
  }

  private hello(proc: number | null, name: string, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new LamError('TIMEOUT', `the lamd did not welcome us within ${timeoutMs} ms`));
        this.conn.close('no welcome');
      }, timeoutMs);
      this.welcome = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      this.conn.send({ t: 'hello', proc, pid: process.pid, name: name.slice(0, 200) });
    });
  }

  /** This node's id. */
  get node(): number {
    return this.requireAttached().node;
  }

  /** This client's OOB process id. */
  get proc(): number {
    return this.requireAttached().proc;
  }

  /** Where others send OOB messages for this client. */
  get address(): OobAddress {
    const a = this.requireAttached();
    return { node: a.node, proc: a.proc };
  }

  // ------------------------------------------------------------ requests

  /** Asks the lamd of `node` to do `op`. Rejects with what failed, or after lam_client_timeout. */
  request<K extends LamdOp>(
    node: number,
    op: K,
    args: OpArgs<K>,
    opts: { timeoutMs?: number } = {},
  ): Promise<OpResult<K>> {
    return this.call(
      node,
      `${op} on n${node}`,
      (id) => ({
        t: 'req',
        id,
        src: this.address,
        node,
        op,
        args,
      }),
      opts.timeoutMs,
    ) as Promise<OpResult<K>>;
  }

  private call(
    node: number,
    what: string,
    build: (id: number) => WireMessage,
    timeoutMs = this.timeoutMs,
  ): Promise<unknown> {
    if (this.closedError) return Promise.reject(this.closedError);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const p: Pending = { node, what, resolve, reject };
      if (Number.isFinite(timeoutMs)) {
        p.timer = setTimeout(() => {
          this.pending.delete(id);
          reject(
            new LamError(
              'TIMEOUT',
              `${what}: no answer within ${timeoutMs / 1000} s (lam_client_timeout); is that lamd alive? (tping)`,
            ),
          );
        }, timeoutMs);
      }
      this.pending.set(id, p);
      try {
        this.conn.send(build(id));
      } catch (err) {
        clearTimeout(p.timer);
        this.pending.delete(id);
        reject(err);
      }
    });
  }

  /** The universe as the local lamd knows it. */
  universe(): Promise<UniverseNode[]> {
    return this.request(this.node, 'universe', null);
  }

  /** Round trip to a lamd's main loop (tping). */
  async ping(node: number): Promise<{ rttMs: number; name: string; pid: number }> {
    const t0 = process.hrtime.bigint();
    const r = await this.request(node, 'ping', null);
    return { rttMs: Number(process.hrtime.bigint() - t0) / 1e6, name: r.name, pid: r.pid };
  }

  /** Starts a process on `node`; its output and exit come back to this client. */
  async spawn(node: number, req: SpawnRequest): Promise<RemoteProcess> {
    const { pid, binding } = await this.request(node, 'spawn', {
      argv: req.argv,
      cwd: req.cwd,
      env: req.env,
      job: req.job,
      bind: req.bind,
    });
    const proc = new RemoteProcess(node, pid, (signal) => this.signal(node, pid, signal));
    if (binding) proc.binding = binding;
    const key = `${node}:${pid}`;
    this.processes.set(key, proc);
    for (const ev of this.unclaimed.get(key) ?? []) this.processEvent(proc, ev);
    this.unclaimed.delete(key);
    return proc;
  }

  async signal(node: number, pid: number, signal: string): Promise<void> {
    await this.request(node, 'signal', { pid, signal });
  }

  // ------------------------------------------------------------ OOB messages

  /**
   * Sends an OOB message (LAM's nsend). Resolves when the destination's lamd accepted it (it is
   * delivered, or held until that process attaches); messages from one process to another
   * arrive in the order sent.
   */
  send(dst: OobAddress, tag: number, data: unknown): Promise<void> {
    return this.call(dst.node, `OOB message to n${dst.node}:${dst.proc}`, (id) => ({
      t: 'oob',
      id,
      src: this.address,
      dst,
      tag,
      data,
    })) as Promise<void>;
  }

  /**
   * Receives the first OOB message matching `filter` (LAM's nrecv), in arrival order. An aborted
   * `signal` withdraws the receive (it rejects): no message is taken by a receiver that left.
   */
  recv(
    filter: RecvFilter = {},
    opts: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<OobMessage> {
    const i = this.inbox.findIndex((m) => matches(filter, m));
    if (i >= 0) return Promise.resolve(this.inbox.splice(i, 1)[0]!);
    if (this.closedError) return Promise.reject(this.closedError);
    if (opts.signal?.aborted) {
      return Promise.reject(
        new LamError('CLOSED', `the receive ${describeFilter(filter)} was withdrawn`),
      );
    }
    return new Promise((resolve, reject) => {
      const signal = opts.signal;
      const withdraw = () => {
        if (!this.recvWaiters.includes(w)) return;
        this.recvWaiters = this.recvWaiters.filter((x) => x !== w);
        clearTimeout(w.timer);
        reject(new LamError('CLOSED', `the receive ${describeFilter(filter)} was withdrawn`));
      };
      // The listener goes with the receive: a long-lived signal must not collect one per message.
      const settled = () => signal?.removeEventListener('abort', withdraw);
      const w: RecvWaiter = {
        filter,
        resolve: (m) => {
          settled();
          resolve(m);
        },
        reject: (err) => {
          settled();
          reject(err);
        },
      };
      signal?.addEventListener('abort', withdraw, { once: true });
      if (opts.timeoutMs !== undefined && Number.isFinite(opts.timeoutMs)) {
        w.timer = setTimeout(() => {
          this.recvWaiters = this.recvWaiters.filter((x) => x !== w);
          w.reject(
            new LamError(
              'TIMEOUT',
              `no OOB message ${describeFilter(filter)} within ${opts.timeoutMs} ms`,
            ),
          );
        }, opts.timeoutMs);
      }
      this.recvWaiters.push(w);
    });
  }

  close(): void {
    this.conn.end();
  }

  /**
   * Lets the process exit while this client is idle (an MPI process: the MPI layer keeps the
   * process alive while it waits for anything, the lamd connection alone must not).
   */
  unref(): void {
    this.conn.socket.unref();
  }

  get closed(): boolean {
    return this.closedError !== undefined;
  }

  // ------------------------------------------------------------ incoming

  private onMessage(m: WireMessage): void {
    switch (m.t) {
      case 'welcome':
        this.attached = { node: m.node, proc: m.proc };
        this.welcome.resolve();
        return;
      case 'nak':
        this.welcome.reject(new LamError('REMOTE', `the lamd refused us: ${m.error}`));
        return;
      case 'res':
        this.settle(m);
        return;
      case 'oob':
        this.deliver({ src: m.src, tag: m.tag, data: m.data });
        return;
      case 'ev':
        this.onEvent(m);
        return;
      default:
        this.conn.close(`protocol error: unexpected ${m.t} from the lamd`);
    }
  }

  private settle(m: Extract<WireMessage, { t: 'res' }>): void {
    const p = this.pending.get(m.id);
    if (!p) return; // timed out already
    this.pending.delete(m.id);
    clearTimeout(p.timer);
    if (m.ok) p.resolve(m.value);
    else
      p.reject(
        new LamError(lamFailureName(m.failure ?? '') ?? 'REMOTE', m.error ?? `${p.what} failed`),
      );
  }

  private deliver(message: OobMessage): void {
    const w = this.recvWaiters.find((x) => matches(x.filter, message));
    if (!w) {
      this.inbox.push(message);
      return;
    }
    this.recvWaiters = this.recvWaiters.filter((x) => x !== w);
    clearTimeout(w.timer);
    w.resolve(message);
  }

  private onEvent(m: Ev): void {
    const body = m.body as { node?: number; pid?: number; reason?: string };
    if (m.ev === 'node-lost') {
      this.nodeLost(body.node ?? -1, body.reason ?? 'connection lost');
      return;
    }
    const key = `${body.node}:${body.pid}`;
    const proc = this.processes.get(key);
    if (proc) {
      this.processEvent(proc, m);
      return;
    }
    const list = this.unclaimed.get(key) ?? [];
    if (this.unclaimed.size < MAX_UNCLAIMED) this.unclaimed.set(key, [...list, m]);
  }

  private processEvent(proc: RemoteProcess, m: Ev): void {
    const body = m.body as {
      fd?: number;
      data?: unknown;
      code?: number | null;
      signal?: string | null;
    };
    if (m.ev === 'io') {
      const data = Buffer.isBuffer(body.data) ? body.data : Buffer.from(String(body.data ?? ''));
      proc.output(body.fd ?? 1, data);
    } else if (m.ev === 'exit') {
      this.processes.delete(`${proc.node}:${proc.pid}`);
      proc.exit({ code: body.code ?? null, signal: body.signal ?? null } as ExitStatus);
    }
  }

  private nodeLost(node: number, reason: string): void {
    const err = new LamError('LAMD_LOST', `the lamd of n${node} is gone (${reason})`);
    for (const [id, p] of this.pending) {
      if (p.node !== node) continue;
      this.pending.delete(id);
      clearTimeout(p.timer);
      p.reject(new LamError('LAMD_LOST', `${p.what}: the lamd of n${node} is gone (${reason})`));
    }
    for (const w of this.recvWaiters.filter((x) => x.filter.from?.node === node)) {
      this.recvWaiters = this.recvWaiters.filter((x) => x !== w);
      clearTimeout(w.timer);
      w.reject(err);
    }
    for (const [key, proc] of this.processes) {
      if (proc.node !== node) continue;
      this.processes.delete(key);
      proc.lost(
        new LamError(
          'LAMD_LOST',
          `process ${proc.pid} on n${node}: the lamd of n${node} is gone (${reason})`,
        ),
      );
    }
    this.emit('node-lost', node, reason);
  }

  private onClose(reason?: string): void {
    const err = new LamError(
      this.attached ? 'LAMD_LOST' : 'REMOTE',
      this.attached
        ? `the connection to the local lamd closed (${reason ?? 'closed'})`
        : `the lamd closed the connection before welcoming us (${reason ?? 'closed'})`,
    );
    this.closedError = err;
    this.welcome?.reject(err);
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new LamError(err.failure, `${p.what}: ${err.message}`));
    }
    this.pending.clear();
    for (const w of this.recvWaiters) {
      clearTimeout(w.timer);
      w.reject(err);
    }
    this.recvWaiters = [];
    for (const proc of this.processes.values()) proc.lost(err);
    this.processes.clear();
    this.emit('close', reason ?? 'closed');
  }

  private requireAttached(): { node: number; proc: number } {
    if (!this.attached) throw new LamError('CLOSED', 'the client is not attached to a lamd');
    return this.attached;
  }
}

function matches(filter: RecvFilter, m: OobMessage): boolean {
  if (filter.tag !== undefined && filter.tag !== m.tag) return false;
  if (filter.from?.node !== undefined && filter.from.node !== m.src.node) return false;
  if (filter.from?.proc !== undefined && filter.from.proc !== m.src.proc) return false;
  return true;
}

function describeFilter(f: RecvFilter): string {
  const parts: string[] = [];
  if (f.tag !== undefined) parts.push(`tag ${f.tag}`);
  if (f.from?.node !== undefined) parts.push(`from n${f.from.node}`);
  if (f.from?.proc !== undefined) parts.push(`proc ${f.from.proc}`);
  return parts.length ? `(${parts.join(', ')})` : '(any)';
}
