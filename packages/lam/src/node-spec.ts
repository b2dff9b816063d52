import { LamError } from './errors';
import { sortNodes, type UniverseNode } from './universe';

/**
 * LAM's node and CPU notation: `N` (every schedulable node), `C` (every schedulable CPU),
 * `n0-2,5` (nodes by id), `c0-3` (CPUs by index). Several may follow each other: `n0 n2 c4`.
 */
export type NodeSpecItem =
  | { kind: 'all-nodes' }
  | { kind: 'all-cpus' }
  | { kind: 'nodes'; ids: number[] }
  | { kind: 'cpus'; ids: number[] };

const RANGE_LIST = /^(\d+(-\d+)?)(,\d+(-\d+)?)*$/;

/** Is `word` node notation (rather than the start of a command)? */
export function isNodeSpec(word: string): boolean {
  if (word === 'N' || word === 'C') return true;
  return /^[nc]/.test(word) && RANGE_LIST.test(word.slice(1));
}

/** Leading node-notation words of `args`, and the rest (the command). */
export function takeNodeSpec(args: readonly string[]): { items: NodeSpecItem[]; rest: string[] } {
  const items: NodeSpecItem[] = [];
  let i = 0;
  for (; i < args.length && isNodeSpec(args[i]!); i++) items.push(parseNodeSpecWord(args[i]!));
  return { items, rest: args.slice(i) };
}

export function parseNodeSpecWord(word: string): NodeSpecItem {
  if (word === 'N') return { kind: 'all-nodes' };
  if (word === 'C') return { kind: 'all-cpus' };
  if (!isNodeSpec(word)) {
    throw new LamError(
      'BAD_ARGS',
      `"${word}" is not a node or CPU list; expected N, C, n0-3,5 or c0-7`,
    );
  }
  const ids: number[] = [];
  for (const part of word.slice(1).split(',')) {
    const [a, b] = part.split('-').map(Number) as [number, number | undefined];
    const hi = b ?? a;
    if (hi < a) throw new LamError('BAD_ARGS', `"${word}": range ${part} runs backwards`);
    if (hi - a > 100_000) throw new LamError('BAD_ARGS', `"${word}": range ${part} is too large`);
    for (let x = a; x <= hi; x++) ids.push(x);
  }
  return { kind: word[0] === 'n' ? 'nodes' : 'cpus', ids };
}

/** `n3` or `3`: one node id (lamshrink). */
export function parseNodeId(word: string): number {
  const m = /^n?(\d+)$/.exec(word);
  if (!m) throw new LamError('BAD_ARGS', `"${word}" is not a node id; expected n3 or 3`);
  return Number(m[1]);
}

/**
 * The nodes the notation names, in order, one entry per process to place (C and cN give one
 * entry per CPU). Nodes with schedule=no are left out of N and C (unless `includeUnschedulable`,
 * for tools that address lamds rather than place processes) but can always be named explicitly.
 */
export function resolveNodeSpec(
  items: readonly NodeSpecItem[],
  universe: readonly UniverseNode[],
  opts: { includeUnschedulable?: boolean } = {},
): UniverseNode[] {
  const nodes = sortNodes(universe);
  const schedulable = opts.includeUnschedulable ? nodes : nodes.filter((n) => n.schedulable);
  const cpus = schedulable.flatMap((n) => Array.from({ length: Math.max(n.cpus, 0) }, () => n));
  const out: UniverseNode[] = [];
  for (const item of items) {
    if (item.kind === 'all-nodes') out.push(...schedulable);
    else if (item.kind === 'all-cpus') out.push(...cpus);
    else if (item.kind === 'nodes') {
      for (const id of item.ids) {
        const node = nodes.find((n) => n.id === id);
        if (!node) throw unknownNode(id, nodes);
        out.push(node);
      }
    } else {
      for (const id of item.ids) {
        const node = cpus[id];
        if (!node) {
          throw new LamError(
            'UNKNOWN_NODE',
            `CPU c${id} is not in the universe (it has c0-c${cpus.length - 1} on schedulable nodes)`,
          );
        }
        out.push(node);
      }
    }
  }
  return out;
}

export function unknownNode(id: number, nodes: readonly UniverseNode[]): LamError {
  const have = sortNodes(nodes)
    .map((n) => `n${n.id}`)
    .join(', ');
  return new LamError(
    'UNKNOWN_NODE',
    `node n${id} is not in the universe (it has ${have}); see lamnodes`,
  );
}

/** `n0  127.0.0.2:2:origin,this_node`: LAM's lamnodes line. */
export function formatNodeLine(node: UniverseNode, me: number): string {
  const flags = [
    node.origin ? 'origin' : undefined,
    node.id === me ? 'this_node' : undefined,
    node.schedulable ? undefined : 'no_schedule',
  ].filter(Boolean);
  return `n${node.id}\t${node.name}:${node.cpus}:${flags.join(',')}`;
}
