import { LamError } from '../errors';
import { describeNode, type UniverseNode } from '../universe';
import { type Connection, connectTo } from '../wire/connection';
import type { WireMessage } from '../wire/wire';
import type { LamdLog } from './lamd-log';

type Failure = (err: LamError) => void;

interface Link {
  conn?: Connection;
  /** messages waiting for the connection, in order */
  queue: { message: WireMessage; onFail?: Failure }[];
}

export interface PeerLinksOptions {
  me: () => number;
  node: (id: number) => UniverseNode | undefined;
  secret: Buffer;
  connectTimeoutMs: number;
  maxFrame: number;
  log: LamdLog;
  /** an established link closed: the peer lamd is gone or unreachable */
  onLost: (node: number, reason: string) => void;
}

/**
 * Outgoing connections to the other lamds, opened on first use. Everything this lamd sends to
 * node X goes over its one link to X, in order: that is what keeps OOB messages between a pair
 * of processes in order. Incoming links are only read from, never written to.
 */
export class PeerLinks {
  private readonly links = new Map<number, Link>();

  constructor(private readonly opts: PeerLinksOptions) {}

  send(nodeId: number, message: WireMessage, onFail?: Failure): void {
    const existing = this.links.get(nodeId);
    if (existing?.conn?.isOpen) {
      existing.conn.send(message);
      return;
    }
    if (existing) {
      existing.queue.push({ message, onFail });
      return;
    }
    const node = this.opts.node(nodeId);
    if (!node) {
      onFail?.(new LamError('UNKNOWN_NODE', `node n${nodeId} is not in the universe`));
      return;
    }
    const link: Link = { queue: [{ message, onFail }] };
    this.links.set(nodeId, link);
    this.open(node, link);
  }

  private open(node: UniverseNode, link: Link): void {
    const what = `the lamd of ${describeNode(node)}`;
    connectTo(
      { host: node.address, port: node.port },
      {
        secret: this.opts.secret,
        timeoutMs: this.opts.connectTimeoutMs,
        maxFrame: this.opts.maxFrame,
        what,
        timeoutParam: 'lam_connect_timeout',
      },
    ).then(
      (conn) => {
        if (this.links.get(node.id) !== link) {
          conn.close('link no longer wanted');
          return;
        }
        link.conn = conn;
        conn.send({ t: 'peer', node: this.opts.me() });
        for (const q of link.queue.splice(0)) conn.send(q.message);
        conn.on('message', () => conn.close('protocol error: a peer link is send-only'));
        conn.once('close', (reason?: string) => {
          if (this.links.get(node.id) === link) this.links.delete(node.id);
          this.opts.log.info(`link to ${describeNode(node)} closed: ${reason}`);
          this.opts.onLost(node.id, reason ?? 'closed');
        });
        this.opts.log.debug(`link to ${describeNode(node)} open`);
      },
      (err: LamError) => {
        if (this.links.get(node.id) === link) this.links.delete(node.id);
        this.opts.log.warn(`cannot reach ${what}: ${err.message}`);
        const failure = new LamError('UNREACHABLE', `${what} is unreachable: ${err.message}`);
        for (const q of link.queue.splice(0)) q.onFail?.(failure);
      },
    );
  }

  /** Waits (at most `ms`) until no link is still connecting, so queued answers get out. */
  async flush(ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (
      Date.now() < deadline &&
      [...this.links.values()].some((l) => !l.conn && l.queue.length)
    ) {
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Drops the link to a node (it left the universe). */
  drop(nodeId: number): void {
    const link = this.links.get(nodeId);
    this.links.delete(nodeId);
    link?.conn?.close('node removed from the universe');
  }

  /** Closes every link after flushing what was written. */
  closeAll(): void {
    for (const [id, link] of this.links) {
      this.links.delete(id);
      link.conn?.end();
    }
  }
}
