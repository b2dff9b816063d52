/** One node of the universe as every lamd knows it (LAM's `struct lamnode` after the boot). */
export interface UniverseNode {
  /** 0 … N-1 at boot; ids of removed nodes are not reused */
  id: number;
  /** the name the boot schema gave it; also the `<host>` of its session directory */
  name: string;
  /** IPv4 address its lamd listens on */
  address: string;
  /** TCP port of its lamd */
  port: number;
  /** how many processes `C` places there (a management number, not hardware) */
  cpus: number;
  /** the node lamboot ran on (NT_ORIGIN) */
  origin: boolean;
  /** false for `schedule=no` (NT_WASTE): skipped by `N`/`C` in lamexec and mpirun */
  schedulable: boolean;
  /** pid of its lamd */
  pid: number;
  /** login name used to reach it, when it differs from the booting user */
  user?: string;
}

/** `n0`-style name of a node id. */
export const nodeLabel = (id: number) => `n${id}`;

/** `n2 (127.0.0.4)`: how messages name a node. */
export function describeNode(node: Pick<UniverseNode, 'id' | 'name'>): string {
  return `n${node.id} (${node.name})`;
}

export function sortNodes(nodes: readonly UniverseNode[]): UniverseNode[] {
  return [...nodes].sort((a, b) => a.id - b.id);
}

const IPV4_RE = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

export function isIpv4(text: string): boolean {
  const m = IPV4_RE.exec(text);
  return !!m && m.slice(1).every((p) => Number(p) <= 255);
}

/** Checks a node received from the network; returns why it is not one, or undefined. */
export function universeNodeProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'not an object';
  const n = value as Record<string, unknown>;
  if (!isInt(n.id, 0, MAX_NODE_ID)) return 'bad id';
  if (typeof n.name !== 'string' || n.name.length === 0 || n.name.length > 255) return 'bad name';
  if (typeof n.address !== 'string' || !isIpv4(n.address)) return 'bad address';
  if (!isInt(n.port, 1, 65535)) return 'bad port';
  if (!isInt(n.cpus, 0, 1_000_000)) return 'bad cpus';
  if (typeof n.origin !== 'boolean' || typeof n.schedulable !== 'boolean') return 'bad flags';
  if (!isInt(n.pid, 0, 2 ** 31)) return 'bad pid';
  if (n.user !== undefined && n.user !== null && typeof n.user !== 'string') return 'bad user';
  return undefined;
}

export const MAX_NODE_ID = 2 ** 20;

export function isInt(x: unknown, lo: number, hi: number): x is number {
  return typeof x === 'number' && Number.isInteger(x) && x >= lo && x <= hi;
}
