import { createServer, type Server } from 'node:net';
import { LamError } from '../errors';
import { describeNode, type UniverseNode } from '../universe';
import { Connection, connectTo, exchange } from '../wire/connection';
import type { WireMessage } from '../wire/wire';
import type { BootNode } from './types';

/** What a new lamd tells lamboot when it calls back (App. B.1.18). */
export interface LamdInfo {
  node: number | null;
  name: string;
  address: string;
  port: number;
  pid: number;
}

export interface RendezvousOptions {
  secret: Buffer;
  /** one node's wait, boot_base_timeout */
  timeoutMs: number;
  maxFrame?: number;
  log?: (message: string) => void;
}

interface Waiter {
  nodes: BootNode[];
  resolve: (node: BootNode) => void;
  reject: (err: Error) => void;
}

/**
 * lamboot's side of the TCP start-up rendezvous (App. B.1.18): a server new lamds call back to,
 * authenticated with the universe secret like every lamd connection. A callback is matched to
 * its node by id, or (for launchers that cannot tell a lamd its id) by name or address.
 */
export class TcpRendezvous {
  private server: Server | undefined;
  private where: { host: string; port: number } | undefined;
  private expected: BootNode[] = [];
  private readonly arrived = new Map<BootNode, LamdInfo>();
  private waiters: Waiter[] = [];

  constructor(private readonly opts: RendezvousOptions) {}

  open(address: string, nodes: BootNode[]): Promise<{ host: string; port: number }> {
    this.expected = nodes.filter((n) => n.boot);
    const server = createServer((socket) => this.accept(socket));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', (err) =>
        reject(
          new LamError(
            'BAD_CONFIG',
            `cannot open the boot rendezvous on ${address}: ${err.message}; is ${address} an address of this host?`,
          ),
        ),
      );
      server.listen({ host: address, port: 0 }, () => {
        const port = (server.address() as { port: number }).port;
        this.where = { host: address, port };
        resolve(this.where);
      });
    });
  }

  get address(): { host: string; port: number } | undefined {
    return this.where;
  }

  /** Resolves with whichever of `nodes` calls back first (its port and pid filled in). */
  receive(nodes: BootNode[]): Promise<BootNode> {
    const ready = nodes.find((n) => this.arrived.has(n));
    if (ready) return Promise.resolve(this.take(ready));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        nodes,
        resolve: (n) => done(() => resolve(n)),
        reject: (err) => done(() => reject(err)),
      };
      const timer = setTimeout(() => {
        done(() =>
          reject(
            new LamError(
              'TIMEOUT',
              `${nodes.map(describeBootNode).join(', ')} did not call back within ${this.opts.timeoutMs / 1000} s (boot_base_timeout)`,
            ),
          ),
        );
      }, this.opts.timeoutMs);
      const done = (then: () => void) => {
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== waiter);
        then();
      };
      this.waiters.push(waiter);
    });
  }

  /**
   * Stops listening. A receive still waiting is rejected (CLOSED) at once, and its timer goes:
   * a module that gave up on a node (its launcher failed) must not keep the process alive.
   */
  close(): Promise<void> {
    for (const w of [...this.waiters]) {
      w.reject(
        new LamError(
          'CLOSED',
          `the boot rendezvous was closed while waiting for ${w.nodes.map(describeBootNode).join(', ')}`,
        ),
      );
    }
    const server = this.server;
    this.server = undefined;
    if (!server) return Promise.resolve();
    return new Promise((resolve) => server.close(() => resolve()));
  }

  private take(node: BootNode): BootNode {
    const info = this.arrived.get(node)!;
    this.arrived.delete(node);
    node.port = info.port;
    node.pid = info.pid;
    if (node.id < 0 && info.node !== null) node.id = info.node;
    return node;
  }

  private accept(socket: import('node:net').Socket): void {
    const conn = new Connection(socket, {
      role: 'server',
      secret: this.opts.secret,
      authTimeoutMs: this.opts.timeoutMs,
      maxFrame: this.opts.maxFrame,
      label: `rendezvous connection from ${socket.remoteAddress}`,
    });
    socket.on('error', () => {});
    conn.once('close', (reason?: string) => {
      if (!conn.peer.done) this.opts.log?.(`dropped ${conn.label}: ${reason}`);
    });
    conn.once('message', (m: WireMessage) => {
      conn.peer.done = true;
      if (m.t !== 'lamd-info') {
        conn.close(`protocol error: expected lamd-info, got ${m.t}`);
        return;
      }
      const node = this.match(m);
      if (!node) {
        conn.send({
          t: 'nak',
          error: `lamboot does not expect a lamd for ${m.name} (node ${m.node})`,
        });
        conn.end();
        return;
      }
      this.arrived.set(node, m);
      conn.send({ t: 'ack' });
      conn.end();
      const waiter = this.waiters.find((w) => w.nodes.includes(node));
      if (waiter) waiter.resolve(this.take(node));
    });
  }

  private match(info: LamdInfo): BootNode | undefined {
    const open = this.expected.filter((n) => !this.arrived.has(n) && n.pid === undefined);
    if (info.node !== null) return open.find((n) => n.id === info.node);
    return open.find((n) => n.name === info.name) ?? open.find((n) => n.address === info.address);
  }
}

export function describeBootNode(node: BootNode): string {
  return node.id >= 0 ? describeNode(node) : node.name;
}

/** The lamd's side: tell lamboot where this lamd listens (App. B.2.13). */
export async function sendLamdInfo(
  target: { host: string; port: number },
  info: LamdInfo,
  secret: Buffer,
  timeoutMs: number,
): Promise<void> {
  const what = 'lamboot (boot rendezvous)';
  const conn = await connectTo(target, {
    secret,
    timeoutMs,
    what,
    timeoutParam: 'boot_base_timeout',
  });
  try {
    const answer = await exchange(conn, { t: 'lamd-info', ...info }, timeoutMs, what);
    if (answer.t !== 'ack') {
      throw new LamError(
        'PROTOCOL',
        `${what} refused this lamd: ${answer.t === 'nak' ? answer.error : answer.t}`,
      );
    }
  } finally {
    conn.close();
  }
}

/** lamboot's broadcast to one lamd: the whole universe (App. B.2.16). */
export async function sendUniverse(
  node: BootNode,
  universe: UniverseNode[],
  secret: Buffer,
  timeoutMs: number,
): Promise<void> {
  const what = `the lamd of ${describeBootNode(node)}`;
  const conn = await connectTo(
    { host: node.address, port: node.port! },
    { secret, timeoutMs, what, timeoutParam: 'boot_base_timeout' },
  );
  try {
    const answer = await exchange(
      conn,
      { t: 'universe-init', nodes: universe, me: node.id },
      timeoutMs,
      what,
    );
    if (answer.t !== 'ack') {
      throw new LamError(
        'PROTOCOL',
        `${what} did not accept the universe: ${answer.t === 'nak' ? answer.error : answer.t}`,
      );
    }
  } finally {
    conn.close();
  }
}

/** A failed boot tells the lamds that already called back to go away (no orphans). */
export async function abandonLamd(
  node: BootNode,
  secret: Buffer,
  reason: string,
  timeoutMs: number,
) {
  const conn = await connectTo(
    { host: node.address, port: node.port! },
    { secret, timeoutMs, what: `the lamd of ${describeBootNode(node)}` },
  );
  // The lamd closes the connection once it has stopped and removed its session directory.
  conn.send({ t: 'nak', error: reason });
  await new Promise<void>((resolve) => {
    conn.once('close', () => resolve());
    setTimeout(() => {
      conn.close('gave up waiting');
      resolve();
    }, timeoutMs).unref();
  });
}

/** The universe as the lamds will know it: every started node, with its lamd's port and pid. */
export function universeFromBoot(nodes: BootNode[]): UniverseNode[] {
  return nodes
    .filter((n) => n.id >= 0 && n.port !== undefined)
    .map((n) => ({
      id: n.id,
      name: n.name,
      address: n.address,
      port: n.port!,
      cpus: n.cpus,
      origin: n.origin,
      schedulable: n.schedulable,
      pid: n.pid ?? 0,
      ...(n.user ? { user: n.user } : {}),
    }));
}
