import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { ParamRegistry } from '@ssi/core';
import { isLamError, LamError } from '../errors';
import type { LamdConfig } from '../hboot/hboot-config';
import { lamInt, lamSeconds } from '../params';
import { JOB_RESOURCE_DIR, jobResourcePrefix, removeJobResources } from '../session/job-resources';
import { isProcessAlive, procStartTime } from '../session/proc-identity';
import { secretFromText, writeSecret } from '../session/secret';
import {
  createSessionDir,
  removeSessionDir,
  SESSION_FILES,
  sessionDirFor,
} from '../session/session-dir';
import { readSessionInfo, writeJsonAtomic, writeSessionInfo } from '../session/session-info';
import { describeNode, sortNodes, type UniverseNode } from '../universe';
import { Connection } from '../wire/connection';
import { ASSIGNED_PROC_BASE, type OobAddress, type WireMessage } from '../wire/wire';
import { LamdLog } from './lamd-log';
import { Mailboxes } from './mailboxes';
import { runOp } from './ops';
import { PeerLinks } from './peer-links';
import { ProcessTable } from './process-table';
import { startReaper } from './reaper';
import { killRecordedProcesses } from './stale-session';

type State = 'new' | 'booting' | 'running' | 'stopping';
type Req = Extract<WireMessage, { t: 'req' }>;
type Oob = Extract<WireMessage, { t: 'oob' }>;

/** How often a lamd that belongs to a process looks whether that process still runs. */
const OWNER_POLL_MS = 500;

/** How a lamd is run, besides its configuration. */
export interface LamdOptions {
  /**
   * The lamd runs inside another process (mpirun's private universe) rather than as a daemon of
   * its own: should that process die without a shutdown, its reaper also removes the session
   * directory and the job resources.
   */
  inProcess?: boolean;
}

/**
 * The LAM daemon of one node: holds the universe, routes OOB messages between any two processes
 * of it, starts and watches processes and forwards their output, and on SIGTERM (or `halt`)
 * stops what it started and removes its session directory.
 */
export class Lamd {
  readonly sessionDir: string;
  readonly secret: Buffer;
  readonly log: LamdLog;
  private state: State = 'new';
  private me: number;
  private readonly universe = new Map<number, UniverseNode>();
  private servers: Server[] = [];
  private tcpPort = 0;
  private readonly connections = new Set<Connection>();
  private readonly clients = new Map<number, Connection>();
  private nextProc = ASSIGNED_PROC_BASE;
  private readonly links: PeerLinks;
  readonly procs: ProcessTable;
  private readonly mailboxes: Mailboxes;
  private readonly lostNotified = new Set<number>();
  private universeWaiter: { resolve: () => void; timer: NodeJS.Timeout } | undefined;
  private stopping: Promise<void> | undefined;
  private ownerWatch: NodeJS.Timeout | undefined;
  private finish!: (code: number) => void;
  /** Resolves with the exit code once the lamd has shut down (for whatever reason). */
  readonly finished = new Promise<number>((resolve) => {
    this.finish = resolve;
  });

  constructor(
    readonly config: LamdConfig,
    readonly params: ParamRegistry,
    private readonly options: LamdOptions = {},
  ) {
    this.sessionDir = sessionDirFor(config.nodeName, config.sessionSuffix);
    this.secret = secretFromText(config.secret, 'the lamd configuration');
    this.me = config.nodeId ?? -1;
    this.log = new LamdLog(join(this.sessionDir, SESSION_FILES.log), config.debug);
    this.mailboxes = new Mailboxes(lamInt(params, 'lam_mailbox_limit'));
    this.links = new PeerLinks({
      me: () => this.me,
      node: (id) => this.universe.get(id),
      secret: this.secret,
      connectTimeoutMs: lamSeconds(params, 'lam_connect_timeout'),
      maxFrame: lamInt(params, 'lam_max_frame'),
      log: this.log,
      onLost: (node, reason) => this.nodeLost(node, reason),
    });
    this.procs = new ProcessTable({
      procsDir: join(this.sessionDir, SESSION_FILES.procs),
      env: () => this.childEnv(),
      log: this.log,
      sink: {
        output: (owner, pid, fd, data) =>
          this.route({ t: 'ev', dst: owner, ev: 'io', body: { node: this.me, pid, fd, data } }),
        exit: (owner, pid, status) =>
          this.route({ t: 'ev', dst: owner, ev: 'exit', body: { node: this.me, pid, ...status } }),
        jobEnded: (job) => this.removeJobResources(job),
      },
    });
  }

  get nodeId(): number {
    return this.me;
  }

  get port(): number {
    return this.tcpPort;
  }

  get isRunning(): boolean {
    return this.state === 'running';
  }

  /** Creates the session directory and starts listening. Throws a LamError saying what failed. */
  async start(): Promise<number> {
    this.claimSessionDir();
    try {
      writeSecret(this.sessionDir, this.secret);
      writeFileSync(join(this.sessionDir, SESSION_FILES.pid), `${process.pid}\n`, { mode: 0o600 });
      writeSessionInfo(this.sessionDir, {
        nodeName: this.config.nodeName,
        suffix: this.config.sessionSuffix,
        lamdPid: process.pid,
        lamdStartTime: procStartTime(process.pid),
        ...(this.config.noResize ? { noResize: this.config.noResize } : {}),
      });
      startReaper(join(this.sessionDir, SESSION_FILES.procs), this.reaperLeftovers());
      this.tcpPort = await this.listenTcp();
      await this.listenUnix();
    } catch (err) {
      for (const s of this.servers) s.close();
      removeSessionDir(this.sessionDir);
      throw err;
    }
    this.state = 'booting';
    this.watchOwner();
    this.log.info(
      `lamd for ${this.config.nodeName} listening on ${this.config.address}:${this.tcpPort} (session ${this.sessionDir})`,
    );
    return this.tcpPort;
  }

  private reaperLeftovers() {
    if (!this.options.inProcess) return undefined;
    const prefix = jobResourcePrefix({ sessionDir: this.sessionDir });
    return { sessionDir: this.sessionDir, resourcePrefix: join(JOB_RESOURCE_DIR, prefix) };
  }

  /** Resolves when lamboot has sent the universe; rejects after the boot timeout. */
  waitForUniverse(): Promise<void> {
    if (this.state === 'running') return Promise.resolve();
    return new Promise((resolve, reject) => {
      const seconds = this.config.bootTimeout;
      const timer = setTimeout(() => {
        this.universeWaiter = undefined;
        reject(
          new LamError(
            'TIMEOUT',
            `no universe from lamboot within ${seconds} s (boot_base_timeout); giving up`,
          ),
        );
      }, seconds * 1000);
      this.universeWaiter = { resolve, timer };
    });
  }

  /**
   * Stops every started process, closes everything, removes the session directory. Connections
   * still open are given `lingerMs` to take the last answers before they are closed.
   */
  shutdown(reason: string, exitCode = 0, lingerMs = 100): Promise<void> {
    if (this.stopping) return this.stopping;
    this.state = 'stopping';
    this.log.info(`shutting down: ${reason}`);
    if (this.universeWaiter) clearTimeout(this.universeWaiter.timer);
    clearInterval(this.ownerWatch);
    this.stopping = (async () => {
      for (const s of this.servers) s.close();
      const killed = await this.procs.killAll(lamSeconds(this.params, 'lam_kill_grace'));
      if (killed > 0) this.log.info(`stopped ${killed} process(es)`);
      this.removeJobResources();
      await this.links.flush(lamSeconds(this.params, 'lam_connect_timeout'));
      this.links.closeAll();
      // The directory goes before the connections: whoever waits for this lamd (lamhalt, an
      // abandoned lamboot) sees its connection close only once the session is gone.
      removeSessionDir(this.sessionDir);
      for (const c of this.connections) c.end();
      if (this.connections.size > 0 && lingerMs > 0)
        await new Promise((r) => setTimeout(r, lingerMs)); // let the last answers drain
      for (const c of this.connections) c.close('lamd stopped');
      this.finish(exitCode);
    })();
    return this.stopping;
  }

  /**
   * A universe that belongs to one process (mpirun's private one) ends with it, also when that
   * process was killed and could not halt it.
   */
  private watchOwner(): void {
    const owner = this.config.owner;
    if (!owner) return;
    this.ownerWatch = setInterval(() => {
      if (isProcessAlive(owner.pid, owner.startTime)) return;
      void this.shutdown(`the process it belongs to (pid ${owner.pid}) is gone`);
    }, OWNER_POLL_MS);
    this.ownerWatch.unref();
  }

  // ------------------------------------------------------------ session directory

  private claimSessionDir(): void {
    const dir = this.sessionDir;
    if (existsSync(dir)) {
      const info = readSessionInfo(dir);
      if (info && isProcessAlive(info.lamdPid, info.lamdStartTime)) {
        throw new LamError(
          'ALREADY_RUNNING',
          `a lamd (pid ${info.lamdPid}) already runs on ${this.config.nodeName} in ${dir}; ` +
            'run lamhalt (or wipe) first, or set LAM_MPI_SESSION_SUFFIX to start another universe',
        );
      }
      // A lamd that died without cleaning up: finish its work, then take the place.
      killRecordedProcesses(join(dir, SESSION_FILES.procs));
      removeJobResources({ sessionDir: dir });
      removeSessionDir(dir);
    }
    try {
      createSessionDir(dir);
    } catch (err) {
      if (isLamError(err)) throw err;
      throw new LamError(
        'BAD_CONFIG',
        `cannot create session directory ${dir}: ${(err as Error).message}`,
      );
    }
  }

  private listenTcp(): Promise<number> {
    const { address, port, nodeName } = this.config;
    const server = createServer((s) => this.accept(s, 'tcp'));
    this.servers.push(server);
    return new Promise((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => {
        const why =
          err.code === 'EADDRNOTAVAIL'
            ? `address ${address} does not belong to this machine`
            : err.code === 'EADDRINUSE'
              ? `port ${port} of ${address} is in use`
              : err.message;
        reject(
          new LamError('BAD_CONFIG', `lamd on ${nodeName} cannot listen on ${address}: ${why}`),
        );
      });
      server.listen({ host: address, port, exclusive: true }, () => {
        server.removeAllListeners('error');
        server.on('error', (err) => this.log.warn(`tcp server: ${err.message}`));
        resolve((server.address() as { port: number }).port);
      });
    });
  }

  private listenUnix(): Promise<void> {
    const path = join(this.sessionDir, SESSION_FILES.socket);
    const server = createServer((s) => this.accept(s, 'unix'));
    this.servers.push(server);
    return new Promise((resolve, reject) => {
      server.once('error', (err) =>
        reject(new LamError('BAD_CONFIG', `cannot listen on ${path}: ${err.message}`)),
      );
      server.listen(path, () => {
        chmodSync(path, 0o600);
        server.removeAllListeners('error');
        server.on('error', (err) => this.log.warn(`unix server: ${err.message}`));
        resolve();
      });
    });
  }

  // ------------------------------------------------------------ connections

  private accept(socket: Socket, via: 'tcp' | 'unix'): void {
    if (this.state === 'stopping') {
      socket.destroy();
      return;
    }
    const label =
      via === 'tcp'
        ? `connection from ${socket.remoteAddress}:${socket.remotePort}`
        : 'local connection';
    const conn = new Connection(socket, {
      role: 'server',
      secret: this.secret,
      authTimeoutMs: lamSeconds(this.params, 'lam_auth_timeout'),
      maxFrame: lamInt(this.params, 'lam_max_frame'),
      label,
    });
    this.connections.add(conn);
    socket.on('error', () => {}); // reported through the connection's close reason
    conn.on('message', (m: WireMessage) => this.onMessage(conn, m));
    conn.on('close', (reason?: string) => this.onClose(conn, reason));
  }

  private onClose(conn: Connection, reason?: string): void {
    this.connections.delete(conn);
    const kind = conn.peer.kind;
    if (kind === 'client') {
      this.clients.delete(conn.peer.proc as number);
      this.log.debug(`client ${conn.peer.proc} (${conn.peer.name}) left: ${reason}`);
    } else if (kind === 'peer') {
      const node = conn.peer.node as number;
      const stillLinked = [...this.connections].some(
        (c) => c.peer.kind === 'peer' && c.peer.node === node,
      );
      if (!stillLinked) this.nodeLost(node, reason ?? 'closed');
    } else if (this.state !== 'stopping' && !conn.peer.done) {
      // Failed handshakes, garbage and protocol errors: dropped, logged, nobody else affected.
      this.log.warn(`dropped ${conn.label}: ${reason}`);
    }
    if (kind && reason?.startsWith('protocol error'))
      this.log.warn(`dropped ${conn.label}: ${reason}`);
  }

  private onMessage(conn: Connection, m: WireMessage): void {
    const kind = conn.peer.kind;
    if (!kind) {
      this.identify(conn, m);
      return;
    }
    if (kind === 'client' && (m.t === 'req' || m.t === 'oob')) {
      // A client speaks only for itself: its source address is what it attached as.
      m.src = { node: this.me, proc: conn.peer.proc as number };
      this.route(m);
      return;
    }
    if (kind === 'peer' && (m.t === 'req' || m.t === 'oob' || m.t === 'res' || m.t === 'ev')) {
      this.route(m);
      return;
    }
    conn.close(`protocol error: unexpected ${m.t} from a ${kind}`);
  }

  private identify(conn: Connection, m: WireMessage): void {
    switch (m.t) {
      case 'hello':
        this.attachClient(conn, m);
        return;
      case 'peer':
        if (this.state !== 'running') {
          conn.close('protocol error: peer link before the universe exists');
          return;
        }
        conn.peer.kind = 'peer';
        conn.peer.node = m.node;
        this.lostNotified.delete(m.node);
        return;
      case 'universe-init':
        this.receiveUniverse(conn, m.nodes, m.me);
        return;
      case 'nak':
        if (this.state === 'booting') {
          // The connection stays open until the shutdown is complete: lamboot waits for that.
          conn.peer.done = true;
          void this.shutdown(`lamboot abandoned the boot: ${m.error}`, 1);
          return;
        }
        conn.close('protocol error: nak outside a boot');
        return;
      default:
        conn.close(`protocol error: ${m.t} before hello`);
    }
  }

  private attachClient(conn: Connection, m: Extract<WireMessage, { t: 'hello' }>): void {
    if (this.state !== 'running') {
      conn.send({
        t: 'nak',
        error: `the lamd of ${this.config.nodeName} is ${this.state}, not running`,
      });
      conn.peer.done = true;
      conn.end();
      return;
    }
    const proc = m.proc ?? this.nextProc++;
    if (this.clients.has(proc)) {
      conn.send({ t: 'nak', error: `process id ${proc} is already attached to this lamd` });
      conn.peer.done = true;
      conn.end();
      return;
    }
    conn.peer.kind = 'client';
    conn.peer.proc = proc;
    conn.peer.name = m.name;
    this.clients.set(proc, conn);
    conn.send({ t: 'welcome', node: this.me, proc });
    for (const queued of this.mailboxes.take(proc)) conn.send(queued);
    this.log.debug(`client ${proc} (${m.name}, pid ${m.pid}) attached`);
  }

  private receiveUniverse(conn: Connection, nodes: UniverseNode[], me: number): void {
    conn.peer.done = true;
    const mine = nodes.find((n) => n.id === me);
    const wrong =
      this.state !== 'booting'
        ? `this lamd is ${this.state}`
        : this.config.nodeId !== null && this.config.nodeId !== me
          ? `it names this lamd n${me}, but it is n${this.config.nodeId}`
          : mine && (mine.address !== this.config.address || mine.port !== this.tcpPort)
            ? `its entry for n${me} is ${mine.address}:${mine.port}, not ${this.config.address}:${this.tcpPort}`
            : undefined;
    if (wrong) {
      conn.send({ t: 'nak', error: `universe refused: ${wrong}` });
      conn.end();
      return;
    }
    this.adoptUniverse(nodes, me);
    conn.send({ t: 'ack' });
    conn.end();
  }

  /**
   * Takes the universe (this lamd is node `me` of it) and starts serving: what lamboot's
   * universe message does, called directly by whoever booted a lamd in its own process.
   */
  adoptUniverse(nodes: UniverseNode[], me: number): void {
    if (this.state !== 'booting') throw new LamError('REMOTE', `this lamd is ${this.state}`);
    this.me = me;
    for (const n of nodes) this.universe.set(n.id, n);
    this.writeUniverseFile();
    this.state = 'running';
    this.log.info(`universe of ${nodes.length} node(s) received; this is n${me}`);
    if (this.universeWaiter) {
      clearTimeout(this.universeWaiter.timer);
      this.universeWaiter.resolve();
      this.universeWaiter = undefined;
    }
  }

  // ------------------------------------------------------------ routing

  /** Sends a message toward its destination: a local process, this lamd, or another node. */
  route(m: WireMessage): void {
    switch (m.t) {
      case 'req':
        if (m.node === this.me) this.handleRequest(m);
        else this.forward(m.node, m, (err) => this.replyError(m, err));
        return;
      case 'oob':
        if (m.dst.node === this.me) this.deliverOob(m);
        else this.forward(m.dst.node, m, (err) => this.replyError(m, err));
        return;
      case 'res':
      case 'ev':
        if (m.dst.node === this.me) this.toLocal(m.dst.proc, m);
        else this.forward(m.dst.node, m, (err) => this.log.debug(`dropped ${m.t}: ${err.message}`));
        return;
      default:
        this.log.warn(`cannot route a ${m.t} message`);
    }
  }

  private forward(node: number, m: WireMessage, onFail: (err: LamError) => void): void {
    if (!this.universe.has(node)) {
      onFail(
        new LamError('UNKNOWN_NODE', `node n${node} is not in the universe (${this.nodeList()})`),
      );
      return;
    }
    this.links.send(node, m, onFail);
  }

  private nodeList(): string {
    return `it has ${sortNodes([...this.universe.values()])
      .map((n) => `n${n.id}`)
      .join(', ')}`;
  }

  private toLocal(proc: number, m: WireMessage): void {
    const client = this.clients.get(proc);
    if (client) client.send(m);
    else this.log.debug(`dropped ${m.t} for process ${proc}: not attached`);
  }

  private deliverOob(m: Oob): void {
    const client = this.clients.get(m.dst.proc);
    const ack = { t: 'res' as const, id: m.id, dst: m.src, ok: true };
    if (client) {
      client.send(m);
      this.route(ack);
      return;
    }
    if (m.dst.proc === 0 || m.dst.proc >= ASSIGNED_PROC_BASE) {
      this.replyError(
        m,
        new LamError('REMOTE', `process n${this.me}:${m.dst.proc} is not attached`),
      );
      return;
    }
    if (!this.mailboxes.put(m.dst.proc, m)) {
      this.replyError(
        m,
        new LamError(
          'REMOTE',
          `process n${this.me}:${m.dst.proc} has not attached and its mailbox is full (lam_mailbox_limit)`,
        ),
      );
      return;
    }
    this.route(ack);
  }

  private replyError(m: { id: number; src: OobAddress }, err: LamError): void {
    this.route({
      t: 'res',
      id: m.id,
      dst: m.src,
      ok: false,
      error: err.message,
      failure: err.failure,
    });
  }

  private handleRequest(m: Req): void {
    runOp(this, m).then(
      (value) => this.route({ t: 'res', id: m.id, dst: m.src, ok: true, value: value ?? null }),
      (err: unknown) =>
        this.replyError(
          m,
          isLamError(err)
            ? err
            : new LamError('REMOTE', `${m.op} failed: ${(err as Error).message}`),
        ),
    );
  }

  // ------------------------------------------------------------ services for ops

  nodes(): UniverseNode[] {
    return sortNodes([...this.universe.values()]);
  }

  describe(): string {
    return describeNode({ id: this.me, name: this.config.nodeName });
  }

  requireRunning(op: string): void {
    if (this.state !== 'running') {
      throw new LamError('REMOTE', `${op}: the lamd of ${this.config.nodeName} is ${this.state}`);
    }
  }

  addNode(node: UniverseNode): void {
    this.universe.set(node.id, node);
    this.lostNotified.delete(node.id);
    this.writeUniverseFile();
    this.log.info(`node ${describeNode(node)} joined`);
  }

  removeNode(id: number): void {
    const node = this.universe.get(id);
    this.universe.delete(id);
    this.links.drop(id);
    this.writeUniverseFile();
    if (node) this.log.info(`node ${describeNode(node)} left`);
  }

  /**
   * Removes the node-local resources (shared-memory segments) of one job that has no process
   * left here, or, without `job`, of every job of this session except those still running.
   */
  removeJobResources(job?: string): void {
    const { removed, failed } = removeJobResources({
      sessionDir: this.sessionDir,
      job,
      keepJobs: job === undefined ? this.procs.liveJobs() : [],
    });
    const whose = job === undefined ? 'the session' : `job ${job}`;
    if (removed.length > 0) this.log.info(`removed ${whose}'s ${removed.join(', ')}`);
    for (const f of failed) this.log.warn(`cannot remove ${f.name} of ${whose}: ${f.reason}`);
  }

  clearMailboxes(): number {
    return this.mailboxes.clear();
  }

  private writeUniverseFile(): void {
    writeJsonAtomic(join(this.sessionDir, SESSION_FILES.universe), {
      me: this.me,
      nodes: this.nodes(),
    });
  }

  private nodeLost(node: number, reason: string): void {
    if (this.state !== 'running' || !this.universe.has(node) || this.lostNotified.has(node)) return;
    this.lostNotified.add(node);
    this.log.warn(`lost contact with n${node}: ${reason}`);
    for (const [proc, client] of this.clients) {
      client.send({
        t: 'ev',
        dst: { node: this.me, proc },
        ev: 'node-lost',
        body: { node, reason },
      });
    }
  }

  private childEnv(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
    env.LAM_MPI_SESSION_DIR = this.sessionDir;
    env.LAM_MPI_NODE_ID = String(this.me);
    if (this.config.sessionSuffix) env.LAM_MPI_SESSION_SUFFIX = this.config.sessionSuffix;
    else delete env.LAM_MPI_SESSION_SUFFIX;
    delete env.LAM_MPI_SESSION_HOST;
    return env;
  }
}
