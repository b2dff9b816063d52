import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineModule, discoverModules, ParamRegistry } from '@ssi/core';
import {
  type BootContext,
  type BootModule,
  type BootNode,
  baseBootActions,
  bootUniverse,
  haltUniverse,
  LamClient,
  type RteLaunch,
  runLocalHboot,
  sessionUser,
  type UniverseNode,
  wipeSession,
  withDeadline,
} from '../src/index';

/** A suffix no real universe uses: every session directory of this run carries it. */
export const SUFFIX = `t${process.pid}`;

export interface LocalBootOptions {
  /** throw this instead of launching on the node */
  fail?: (node: BootNode) => Error | undefined;
  /** pretend the launch worked without starting anything (the node never calls back) */
  silent?: (node: BootNode) => boolean;
  /** give every lamd this LamdConfig.noResize (what a batch-system module does) */
  noResize?: string;
}

/**
 * A boot module that runs every node's hboot on this machine: each lamd binds its own
 * loopback address, so the nodes are distinct. (The real remote path is boot-rsh's, tested
 * through the testbed's sshds.)
 */
export function localBootModule(opts: LocalBootOptions = {}): BootModule {
  return defineModule({
    ssiApi: '1.0.0',
    type: 'boot' as const,
    typeApi: '1.1.0',
    name: 'local',
    version: '1.0.0',
    init(_where: string, ctx: BootContext) {
      const startRteProc = async (node: BootNode, launch: RteLaunch) => {
        const failure = opts.fail?.(node);
        if (failure) throw failure;
        if (opts.silent?.(node)) return { stdout: '', stderr: '' };
        if (opts.noResize && launch.which === 'lamd') {
          const config = JSON.parse(launch.stdin);
          config.lamd.noResize = opts.noResize;
          launch = { ...launch, stdin: `${JSON.stringify(config)}\n` };
        }
        const r = await runLocalHboot(launch);
        if (r.code !== 0) throw new Error(`hboot on ${node.name} failed: ${r.stderr.trim()}`);
        return { stdout: r.stdout, stderr: r.stderr };
      };
      return { priority: 50, actions: baseBootActions({ ctx, startRteProc }) };
    },
  });
}

/** The environment of a process "on" the host with this address. */
export function envFor(address: string, extra: Record<string, string> = {}) {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/root',
    LAM_MPI_SESSION_HOST: address,
    LAM_MPI_SESSION_SUFFIX: SUFFIX,
    ...extra,
  } as Record<string, string | undefined>;
}

let schemaCount = 0;

export function writeSchema(text: string): string {
  const file = join(tmpdir(), `ssi-lam-test-${process.pid}-${schemaCount++}.hosts`);
  writeFileSync(file, text);
  return file;
}

export interface LocalUniverse {
  universe: UniverseNode[];
  /** a client attached on node `id` */
  client(id: number, proc?: number | null): Promise<LamClient>;
  /** a client on the host with this address (nodes added by lamgrow) */
  clientAt(address: string): Promise<LamClient>;
  sessionDir(id: number): string;
}

const booted: UniverseNode[][] = [];
const clients: LamClient[] = [];

/** Boots `addresses` (the first is the origin) with the local module. */
export async function bootLocal(
  addresses: string[],
  opts: LocalBootOptions & { lines?: string[]; params?: Record<string, string> } = {},
): Promise<LocalUniverse> {
  const schema = writeSchema(addresses.map((a, i) => `${a} ${opts.lines?.[i] ?? ''}`).join('\n'));
  const env = envFor(addresses[0]!, paramEnv(opts.params));
  const params = new ParamRegistry({ env });
  const discovery = discoverModules({ staticModules: [localBootModule(opts)] });
  try {
    const report = await bootUniverse({
      ssi: { params, discovery },
      env,
      schemaFile: schema,
      warn: () => {},
    });
    booted.push(report.universe);
    return {
      universe: report.universe,
      async client(id, proc = null) {
        const node = report.universe.find((n) => n.id === id)!;
        const c = await LamClient.connect({
          env: envFor(node.address, paramEnv(opts.params)),
          proc,
          name: 'test',
        });
        clients.push(c);
        return c;
      },
      async clientAt(address) {
        const c = await LamClient.connect({
          env: envFor(address, paramEnv(opts.params)),
          name: 'test',
        });
        clients.push(c);
        return c;
      },
      sessionDir: (id) => sessionDirOf(report.universe.find((n) => n.id === id)!.name),
    };
  } finally {
    rmSync(schema, { force: true });
  }
}

export function paramEnv(params: Record<string, string> = {}) {
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [`LAM_MPI_SSI_${k}`, v]));
}

/**
 * afterEach: halt every universe booted by the test (lamhalt's way), then kill by pid and wipe
 * whatever is left, so that a failing test leaves no process and no session directory.
 */
export async function cleanupUniverses(): Promise<void> {
  for (const c of clients.splice(0)) c.close();
  for (const universe of booted.splice(0)) {
    const alive = universe.filter((n) => existsSync(sessionDirOf(n.name)));
    if (alive.length > 0) {
      try {
        const c = await LamClient.connect({ env: envFor(alive[0]!.name), name: 'cleanup' });
        await haltUniverse(c, 10_000);
        c.close();
      } catch {
        // fall through to the forceful way
      }
    }
    for (const n of universe) {
      try {
        process.kill(n.pid, 'SIGKILL');
      } catch {}
    }
  }
  for (const name of readdirSync(tmpdir())) {
    const prefix = `ssi-${sessionUser()}@`;
    if (name.startsWith(prefix) && name.endsWith(`-${SUFFIX}`)) {
      const node = name.slice(prefix.length, -SUFFIX.length - 1);
      await wipeSession(node, SUFFIX, 2000);
    }
  }
}

export function sessionDirOf(name: string): string {
  return join(tmpdir(), `ssi-${sessionUser()}@${name}-${SUFFIX}`);
}

export function leftoverSessionDirs(): string[] {
  return readdirSync(tmpdir()).filter((n) => n.startsWith('ssi-') && n.endsWith(`-${SUFFIX}`));
}

export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/\) [ZX] /.test(stat);
  } catch {
    return false;
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until true; fails with `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => boolean,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
}

/** A promise that fails with `what` after `ms`. */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return withDeadline(p, ms, () => new Error(`timed out after ${ms} ms waiting for ${what}`));
}
