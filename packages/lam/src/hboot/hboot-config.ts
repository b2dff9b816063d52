import { LamError } from '../errors';
import { isInt, isIpv4 } from '../universe';

/**
 * What a lamd needs to start. It reaches the node on hboot's stdin (never on a command line):
 * the remote shell's argv is visible to every user of the node, stdin is not.
 */
export interface LamdConfig {
  /** null when the launcher cannot know it (slurm-style): lamboot assigns it at the rendezvous */
  nodeId: number | null;
  nodeName: string;
  /** the address the lamd binds to; every connection to it goes there */
  address: string;
  /** 0: any free port */
  port: number;
  cpus: number;
  schedulable: boolean;
  origin: boolean;
  user?: string;
  /** hex universe secret */
  secret: string;
  sessionSuffix?: string;
  /** where lamboot waits for this lamd to call back */
  rendezvous: { host: string; port: number };
  /** seconds to wait for the universe after calling back */
  bootTimeout: number;
  /** LAM_MPI_SSI_* settings given to lamboot, so the lamd sees the same parameters */
  ssiEnv: Record<string, string>;
  debug: boolean;
  /**
   * Set by boot modules of batch systems whose jobs have a fixed set of nodes (tm): why this
   * universe cannot grow or shrink. lamgrow and lamshrink refuse with this reason.
   */
  noResize?: string;
  /**
   * The process of this node the universe belongs to (mpirun's private universe): the lamd halts
   * once it is gone, so that a killed mpirun leaves no daemon behind. `startTime` (field 22 of
   * /proc/PID/stat) tells it from a later process that got the same pid.
   */
  owner?: { pid: number; startTime?: string };
}

/** hboot's three jobs (LAM's lamd, recon and wipe run-time processes). */
export type HbootConfig =
  | { mode: 'lamd'; lamd: LamdConfig }
  | { mode: 'recon'; nodeName: string }
  | { mode: 'wipe'; nodeName: string; sessionSuffix?: string };

export function encodeHbootConfig(config: HbootConfig): string {
  return `${JSON.stringify(config)}\n`;
}

export function parseHbootConfig(text: string): HbootConfig {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw bad('stdin is not a boot configuration (expected one JSON line from lamboot)');
  }
  const c = value as Record<string, unknown>;
  if (c === null || typeof c !== 'object') throw bad('the boot configuration is not an object');
  if (c.mode === 'lamd') return { mode: 'lamd', lamd: checkLamdConfig(c.lamd) };
  if (c.mode === 'recon' && typeof c.nodeName === 'string') {
    return { mode: 'recon', nodeName: c.nodeName };
  }
  if (c.mode === 'wipe' && typeof c.nodeName === 'string') {
    const suffix = typeof c.sessionSuffix === 'string' ? c.sessionSuffix : undefined;
    return { mode: 'wipe', nodeName: c.nodeName, sessionSuffix: suffix };
  }
  throw bad(`unknown or incomplete boot configuration (mode ${JSON.stringify(c.mode)})`);
}

export function checkLamdConfig(value: unknown): LamdConfig {
  const c = value as Record<string, unknown>;
  if (c === null || typeof c !== 'object') throw bad('lamd configuration missing');
  const problems: string[] = [];
  const need = (ok: boolean, what: string) => ok || problems.push(what);
  need(c.nodeId === null || isInt(c.nodeId, 0, 2 ** 20), 'nodeId');
  need(typeof c.nodeName === 'string' && c.nodeName.length > 0, 'nodeName');
  need(typeof c.address === 'string' && isIpv4(c.address), 'address (IPv4)');
  need(isInt(c.port, 0, 65535), 'port');
  need(isInt(c.cpus, 0, 1_000_000), 'cpus');
  need(typeof c.schedulable === 'boolean' && typeof c.origin === 'boolean', 'flags');
  need(typeof c.secret === 'string' && /^[0-9a-f]{64}$/.test(c.secret), 'secret');
  const r = c.rendezvous as Record<string, unknown> | undefined;
  need(!!r && typeof r.host === 'string' && isInt(r.port, 1, 65535), 'rendezvous');
  need(isInt(c.bootTimeout, 1, 86_400), 'bootTimeout');
  need(!!c.ssiEnv && typeof c.ssiEnv === 'object', 'ssiEnv');
  need(c.noResize === undefined || typeof c.noResize === 'string', 'noResize');
  need(c.owner === undefined || isOwner(c.owner), 'owner');
  if (problems.length > 0)
    throw bad(`lamd configuration is missing or has bad ${problems.join(', ')}`);
  return c as unknown as LamdConfig;
}

function isOwner(value: unknown): boolean {
  const o = value as Record<string, unknown>;
  return (
    o !== null &&
    typeof o === 'object' &&
    isInt(o.pid, 1, 2 ** 31 - 1) &&
    (o.startTime === undefined || typeof o.startTime === 'string')
  );
}

function bad(message: string): LamError {
  return new LamError('BAD_CONFIG', message);
}
