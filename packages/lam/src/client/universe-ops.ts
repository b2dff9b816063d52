import { existsSync } from 'node:fs';
import { LamError } from '../errors';
import { unknownNode } from '../node-spec';
import type { UniverseNode } from '../universe';
import type { LamClient } from './lam-client';
import { refuseResize } from './resize-guard';

export interface NodeOutcome<T = unknown> {
  node: UniverseNode;
  ok: boolean;
  value?: T;
  error?: string;
}

async function onEach<T>(
  nodes: UniverseNode[],
  run: (node: UniverseNode) => Promise<T>,
): Promise<NodeOutcome<T>[]> {
  const settled = await Promise.allSettled(nodes.map(run));
  return settled.map((r, i) =>
    r.status === 'fulfilled'
      ? { node: nodes[i]!, ok: true, value: r.value }
      : { node: nodes[i]!, ok: false, error: (r.reason as Error).message },
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * lamhalt: every other lamd first (their answers travel through the local one), then the local
 * lamd; returns when the local session directory is gone. Nodes that do not answer are
 * reported (run wipe for them); the others are halted anyway.
 */
export async function haltUniverse(client: LamClient, timeoutMs = 30_000): Promise<NodeOutcome[]> {
  const nodes = await client.universe();
  const me = client.node;
  const others = await onEach(
    nodes.filter((n) => n.id !== me),
    (n) => client.request(n.id, 'halt', null),
  );
  const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
  const local = await onEach(
    nodes.filter((n) => n.id === me),
    (n) => client.request(n.id, 'halt', null),
  );
  const deadline = Date.now() + timeoutMs;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
  clearTimeout(timer); // a pending timer would keep the caller's process alive for timeoutMs
  while (client.sessionDir && existsSync(client.sessionDir) && Date.now() < deadline)
    await sleep(25);
  if (client.sessionDir && existsSync(client.sessionDir)) {
    local[0] = {
      ...local[0]!,
      ok: false,
      error: `the local lamd did not finish within ${timeoutMs / 1000} s; run wipe`,
    };
  }
  return [...others, ...local].sort((a, b) => a.node.id - b.node.id);
}

/**
 * lamshrink: node `id` leaves. Every other lamd forgets it first (the local one last, since
 * it routes the others' requests), then the node itself is told, and halts.
 */
export async function shrinkUniverse(client: LamClient, id: number): Promise<NodeOutcome[]> {
  refuseResize(client.sessionDir, 'lamshrink');
  const nodes = await client.universe();
  const target = nodes.find((n) => n.id === id);
  if (!target) throw unknownNode(id, nodes);
  if (id === client.node) {
    throw new LamError(
      'BAD_ARGS',
      `n${id} is the node this command runs on; run lamshrink on another node of the universe`,
    );
  }
  const others = nodes.filter((n) => n.id !== id && n.id !== client.node);
  const outcomes = await onEach(others, (n) =>
    client.request(n.id, 'universe-update', { remove: id }),
  );
  const gone = await onEach([target], (n) =>
    client.request(n.id, 'universe-update', { remove: id }),
  );
  const local = await onEach(
    nodes.filter((n) => n.id === client.node),
    (n) => client.request(n.id, 'universe-update', { remove: id }),
  );
  return [...outcomes, ...gone, ...local].sort((a, b) => a.node.id - b.node.id);
}

/** lamclean: every lamd stops what it started and drops undelivered messages. */
export async function cleanUniverse(
  client: LamClient,
): Promise<NodeOutcome<{ killed: number; messages: number }>[]> {
  const nodes = await client.universe();
  return onEach(nodes, (n) => client.request(n.id, 'clean', null));
}
