import { spawn } from 'node:child_process';
import { encodeHbootConfig, type HbootConfig } from '../hboot/hboot-config';
import { localHbootCommand } from '../package-paths';
import { secretToText } from '../session/secret';
import type { BootContext, BootNode, RteLaunch, RteProcKind } from './types';

export interface AgentResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** spawning the agent itself failed (ENOENT, ...) */
  spawnError?: string;
}

/**
 * Runs a launcher command (ssh, rsh, a local hboot) to completion with `stdin`, collecting its
 * output; killed after `timeoutMs` (App. B.1.13, `ioexecvp`). Never rejects.
 */
export function runAgent(argv: string[], stdin: string, timeoutMs: number): Promise<AgentResult> {
  return new Promise((resolve) => {
    const [file, ...args] = argv;
    const child = spawn(file!, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    let spawnError: string | undefined;
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.stdin.on('error', () => {}); // the remote side may exit before reading it all
    child.stdin.end(stdin);
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (e) => {
      spawnError = e.message;
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        timedOut,
        spawnError,
      });
    });
  });
}

/** The remote command for a node: `<prefix>/bin/hboot`, or `hboot` found through PATH. */
export function hbootCommand(node: BootNode): string[] {
  return [node.prefix ? `${node.prefix === '/' ? '' : node.prefix}/bin/hboot` : 'hboot'];
}

/** What hboot is told to do on `node` (App. B.1.8 / B.1.15: the lamd's start parameters). */
export function hbootConfigFor(
  node: BootNode,
  which: RteProcKind,
  ctx: BootContext,
  rendezvous?: { host: string; port: number },
): HbootConfig {
  if (which === 'recon') return { mode: 'recon', nodeName: node.name };
  if (which === 'wipe')
    return { mode: 'wipe', nodeName: node.name, sessionSuffix: ctx.sessionSuffix };
  if (!rendezvous) throw new Error('starting a lamd needs the rendezvous address');
  return {
    mode: 'lamd',
    lamd: {
      nodeId: node.id >= 0 ? node.id : null,
      nodeName: node.name,
      address: node.address,
      port: 0,
      cpus: node.cpus,
      schedulable: node.schedulable,
      origin: node.origin,
      ...(node.user ? { user: node.user } : {}),
      secret: secretToText(ctx.secret),
      ...(ctx.sessionSuffix ? { sessionSuffix: ctx.sessionSuffix } : {}),
      rendezvous,
      bootTimeout: Math.max(1, Math.ceil(ctx.timeoutMs / 1000)),
      ssiEnv: ctx.ssiEnv,
      debug: ctx.debug,
      ...(node.origin && ctx.owner ? { owner: ctx.owner } : {}),
    },
  };
}

export function rteLaunchFor(
  node: BootNode,
  which: RteProcKind,
  ctx: BootContext,
  rendezvous?: { host: string; port: number },
): RteLaunch {
  return {
    which,
    command: hbootCommand(node),
    stdin: encodeHbootConfig(hbootConfigFor(node, which, ctx, rendezvous)),
    timeoutMs: ctx.timeoutMs,
  };
}

/** Runs this installation's hboot directly: how a module starts the node it runs on. */
export function runLocalHboot(launch: RteLaunch): Promise<AgentResult> {
  return runAgent(localHbootCommand(), launch.stdin, launch.timeoutMs);
}
