import { lookup } from 'node:dns/promises';
import { networkInterfaces } from 'node:os';
import { withDeadline } from '../deadline';
import { LamError } from '../errors';
import { isIpv4 } from '../universe';
import type { BootNode } from './types';

const at = (n: BootNode) => (n.where ? `${n.where.file}:${n.where.line}: ` : '');

/** Fills in every node's IPv4 address; a name that does not resolve is an error naming it. */
export async function resolveAddresses(nodes: BootNode[], timeoutMs: number): Promise<void> {
  const problems: string[] = [];
  await Promise.all(
    nodes
      .filter((n) => n.id >= 0 && !n.address)
      .map(async (n) => {
        if (isIpv4(n.name)) {
          n.address = n.name;
          return;
        }
        try {
          n.address = await withTimeout(lookup(n.name, { family: 4 }), timeoutMs, n.name).then(
            (r) => r.address,
          );
        } catch (err) {
          problems.push(
            `${at(n)}cannot resolve host "${n.name}" to an IPv4 address (${(err as Error).message})`,
          );
        }
      }),
  );
  if (problems.length > 0) throw new LamError('BAD_SCHEMA', problems.sort().join('\n'));
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return withDeadline(p, ms, () => new Error(`no answer for ${what} within ${ms} ms`));
}

function localAddresses(): Set<string> {
  const out = new Set<string>();
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4') out.add(a.address);
  }
  return out;
}

/**
 * Marks the node this process runs on (NT_ME, and NT_ORIGIN for lamboot). It is the node whose
 * name is this host's name (LAM_MPI_SESSION_HOST, else the host name); failing that, the one
 * node whose address belongs to a local interface. lamboot must run on a node it boots.
 */
export function markLocalNode(nodes: BootNode[], localHost: string, file: string): BootNode {
  const valid = nodes.filter((n) => n.id >= 0);
  let mine = valid.find((n) => n.name === localHost);
  if (!mine) {
    const local = localAddresses();
    const candidates = valid.filter((n) => local.has(n.address) || n.name === 'localhost');
    if (candidates.length === 1) mine = candidates[0];
  }
  if (!mine) {
    throw new LamError(
      'BAD_SCHEMA',
      `this host ("${localHost}") is not in the boot schema ${file}; lamboot must run on one of the ` +
        `nodes it boots. If this host has another name there, set LAM_MPI_SESSION_HOST to that name.`,
    );
  }
  mine.me = true;
  return mine;
}

/**
 * 127.0.0.1 may only be used alone (Ch. 4.1.2): other nodes could not reach this node there.
 * (Other loopback addresses, 127.0.0.2 and up, are distinct hosts on the testbed.)
 */
export function check127Rule(nodes: BootNode[]): void {
  const valid = nodes.filter((n) => n.id >= 0);
  if (valid.length < 2) return;
  const lo = valid.find((n) => n.address === '127.0.0.1');
  if (lo) {
    throw new LamError(
      'BAD_SCHEMA',
      `${at(lo)}${lo.name} is 127.0.0.1, which cannot be used together with other hosts: they ` +
        `could not reach this node there. Use this host's network name or address instead.`,
    );
  }
}

/** Two entries for one address would be two lamds fighting over one session. */
export function checkDistinctAddresses(nodes: BootNode[]): void {
  const seen = new Map<string, BootNode>();
  for (const n of nodes.filter((x) => x.id >= 0)) {
    const first = seen.get(n.address);
    if (first) {
      throw new LamError(
        'BAD_SCHEMA',
        `${at(n)}${n.name} is ${n.address}, which is already ${first.name}${first.id >= 0 ? ` (n${first.id})` : ''}; list every host once`,
      );
    }
    seen.set(n.address, n);
  }
}
