import type { Discovery, ParamRegistry } from '@ssi/core';
import { createVerboseStream } from '@ssi/core';
import { LamClient } from '../client/lam-client';
import { refuseResize } from '../client/resize-guard';
import { LamError } from '../errors';
import { registerLamParams } from '../params';
import { isProcessAlive, procStartTime } from '../session/proc-identity';
import { createSecret, readSecret } from '../session/secret';
import { sessionDirFor, sessionHost, sessionSuffix } from '../session/session-dir';
import { readSessionInfo } from '../session/session-info';
import type { UniverseNode } from '../universe';
import { registerBootBaseParams } from './base-params';
import { type SelectedBoot, selectBootModule } from './framework';
import { abandonLamd, describeBootNode, universeFromBoot } from './rendezvous';
import type { BootArgs, BootContext, BootNode, RteOutcome } from './types';

type Env = Record<string, string | undefined>;

/** What every engine (lamboot, recon, wipe, lamgrow) is given. */
export interface EngineOptions {
  ssi: { params: ParamRegistry; discovery: Discovery };
  env?: Env;
  /** -d: more output, and lamds log debug lines */
  debug?: boolean;
  /**
   * lamboot: the universe belongs to this process of the origin node (mpirun's private
   * universe); the origin's lamd halts once it is gone.
   */
  ownerPid?: number;
  /** warnings for the user (duplicate hosts, nodes that did not hear of a change) */
  warn?: (message: string) => void;
  /** where the boot framework's verbose stream writes */
  verboseWrite?: (line: string) => void;
  /** a node is up (lamboot: joined; recon/wipe: done), with its hboot output */
  onNode?: (node: BootNode, outcome: RteOutcome, done: number, total: number) => void;
  /** a node failed (recon/wipe keep going) */
  onNodeError?: (node: BootNode, error: Error) => void;
}

export interface BootReport {
  module: string;
  universe: UniverseNode[];
  /** the origin's session directory */
  sessionDir: string;
}

export interface NodeReport {
  node: BootNode;
  ok: boolean;
  /** hboot's answer, or the error */
  message: string;
}

interface Prepared {
  selected: SelectedBoot;
  ctx: BootContext;
  nodes: BootNode[];
}

export function bootContext(
  opts: EngineOptions,
  secret: Buffer,
  extra: Partial<BootContext> = {},
): BootContext {
  const { params } = opts.ssi;
  const env = opts.env ?? process.env;
  registerBootBaseParams(params);
  registerLamParams(params);
  return {
    params,
    verbose: createVerboseStream(params, 'boot', opts.verboseWrite),
    secret,
    sessionSuffix: sessionSuffix(env),
    localHost: sessionHost(env),
    timeoutMs: params.get<number>('boot_base_timeout') * 1000,
    debug: opts.debug ?? false,
    ssiEnv: params.toEnvironment(),
    ...(opts.ownerPid
      ? { owner: { pid: opts.ownerPid, startTime: procStartTime(opts.ownerPid) } }
      : {}),
    warn: opts.warn ?? ((m) => process.stderr.write(`warning: ${m}\n`)),
    ...extra,
  };
}

/** Select the module and run the launch actions up to a verified node list (Ch. 4.1.4, 1-3). */
export async function prepare(
  opts: EngineOptions,
  args: BootArgs,
  ctx: BootContext,
): Promise<Prepared> {
  const selected = await selectBootModule(opts.ssi, 'root', ctx, opts.verboseWrite);
  try {
    await selected.actions.parseOptions(args);
    const nodes = await selected.actions.allocateNodes();
    await selected.actions.verifyNodes(nodes);
    return { selected, ctx, nodes };
  } catch (err) {
    await selected.close();
    throw err;
  }
}

function progress(opts: EngineOptions, nodes: BootNode[]) {
  const total = nodes.filter((n) => n.boot && n.id >= 0).length;
  let done = 0;
  return {
    onNode: (node: BootNode, outcome: RteOutcome) => opts.onNode?.(node, outcome, ++done, total),
    onNodeError: (node: BootNode, error: Error) => opts.onNodeError?.(node, error),
  };
}

/** Refuses to boot over a universe whose lamd still runs on this node. */
export function ensureNotRunning(nodeName: string, suffix?: string): void {
  const dir = sessionDirFor(nodeName, suffix);
  const info = readSessionInfo(dir);
  if (info && isProcessAlive(info.lamdPid, info.lamdStartTime)) {
    throw new LamError(
      'ALREADY_RUNNING',
      `a universe is already running here (lamd pid ${info.lamdPid}, session directory ${dir}); ` +
        'run lamhalt first, or set LAM_MPI_SESSION_SUFFIX to boot a second one',
    );
  }
}

/**
 * lamboot (Ch. 4.1.4): start a lamd on every node of the boot schema, collect their call backs,
 * and broadcast the universe to all. If anything fails, the lamds already started are stopped
 * before the error is thrown: a failed boot leaves nothing behind.
 */
export async function bootUniverse(
  opts: EngineOptions & { schemaFile?: string },
): Promise<BootReport> {
  const ctx = bootContext(opts, createSecret());
  const { selected, nodes } = await prepare(opts, { kind: 'schema', file: opts.schemaFile }, ctx);
  const { actions } = selected;
  try {
    const origin = nodes.find((n) => n.me)!;
    ensureNotRunning(origin.name, ctx.sessionSuffix);
    await actions.prepareBoot(nodes);
    await actions.openSrvConnection(nodes);
    let result: Awaited<ReturnType<typeof actions.startRteProcs>>;
    try {
      result = await actions.startRteProcs(nodes, 'lamd', {
        rendezvous: true,
        ...progress(opts, nodes),
      });
    } finally {
      await actions.closeSrvConnection();
    }
    if (result.failures.length > 0) {
      await abandonStarted(nodes, ctx, 'another node failed to boot');
      throw bootFailure('lamboot', result.failures);
    }
    await broadcastUniverse(selected, nodes, ctx);
    const universe = universeFromBoot(nodes);
    await actions.deallocateNodes(nodes);
    return {
      module: selected.name,
      universe,
      sessionDir: sessionDirFor(origin.name, ctx.sessionSuffix),
    };
  } finally {
    await selected.close();
  }
}

/** Sends the universe to every node; on failure halts the ones that have it, abandons the rest. */
async function broadcastUniverse(
  selected: SelectedBoot,
  nodes: BootNode[],
  ctx: BootContext,
  targets = nodes.filter((n) => n.id >= 0 && n.port !== undefined),
) {
  const members = targets;
  const informed: BootNode[] = [];
  for (const node of members) {
    try {
      await selected.actions.sendUniverseInfo(nodes, nodes.indexOf(node));
      informed.push(node);
    } catch (err) {
      await Promise.all(informed.map((n) => haltByTcp(n, ctx)));
      await abandonStarted(
        members.filter((n) => !informed.includes(n)),
        ctx,
        'the universe broadcast failed',
      );
      throw new LamError(
        'LAUNCH_FAILED',
        `lamboot could not give ${describeBootNode(node)} the universe: ${(err as Error).message}. ` +
          'The lamds already started were stopped.',
      );
    }
  }
}

async function abandonStarted(nodes: BootNode[], ctx: BootContext, reason: string): Promise<void> {
  const called = nodes.filter((n) => n.port !== undefined && n.pid !== undefined);
  await Promise.all(
    called.map((n) => abandonLamd(n, ctx.secret, reason, ctx.timeoutMs).catch(() => {})),
  );
}

async function haltByTcp(node: BootNode, ctx: BootContext): Promise<void> {
  try {
    const client = await LamClient.connect({
      tcp: { host: node.address, port: node.port!, secret: ctx.secret },
      params: ctx.params,
      name: 'lamboot cleanup',
    });
    await client.request(node.id, 'halt', null).catch(() => {});
    client.close();
  } catch {
    // it is gone already
  }
}

function bootFailure(command: string, failures: { node: BootNode; error: Error }[]): LamError {
  const lines = failures.map((f) => `${describeBootNode(f.node)}: ${f.error.message}`);
  const failure = failures.every((f) => (f.error as LamError).failure === 'NOT_INSTALLED')
    ? 'NOT_INSTALLED'
    : failures.every((f) => (f.error as LamError).failure === 'TIMEOUT')
      ? 'TIMEOUT'
      : 'LAUNCH_FAILED';
  const head =
    lines.length === 1
      ? `${command} failed on ${lines[0]}`
      : `${command} failed on ${lines.length} nodes:\n  ${lines.join('\n  ')}`;
  return new LamError(failure, `${head}\nNo lamd was left running.`);
}

/** recon (Ch. 4.1.5): can the installation be started on every node? Reports every node. */
export async function reconUniverse(
  opts: EngineOptions & { schemaFile?: string },
): Promise<NodeReport[]> {
  return runEverywhere(opts, 'recon');
}

/** wipe (Ch. 4.1.5): take down every lamd (and what it started) the schema's nodes have. */
export async function wipeUniverse(
  opts: EngineOptions & { schemaFile?: string },
): Promise<NodeReport[]> {
  return runEverywhere(opts, 'wipe');
}

async function runEverywhere(
  opts: EngineOptions & { schemaFile?: string },
  which: 'recon' | 'wipe',
): Promise<NodeReport[]> {
  const ctx = bootContext(opts, createSecret());
  const { selected, nodes } = await prepare(opts, { kind: 'schema', file: opts.schemaFile }, ctx);
  try {
    await selected.actions.prepareBoot(nodes);
    const reports: NodeReport[] = [];
    const p = progress(opts, nodes);
    await selected.actions.startRteProcs(nodes, which, {
      rendezvous: false,
      continueOnError: true,
      onNode: (node, outcome) => {
        reports.push({ node, ok: true, message: outcome.stdout.trim() });
        p.onNode(node, outcome);
      },
      onNodeError: (node, error) => {
        reports.push({ node, ok: false, message: error.message });
        p.onNodeError(node, error);
      },
    });
    await selected.actions.deallocateNodes(nodes);
    return reports.sort((a, b) => a.node.id - b.node.id);
  } finally {
    await selected.close();
  }
}

/**
 * lamgrow (Ch. 4.1.5): boot one more node into the running universe and tell every lamd.
 * Runs on a node of the universe (it reads the secret from the local session directory).
 */
export async function growUniverse(
  opts: EngineOptions & { host: string; words?: string[]; nodeId?: number; client?: LamClient },
): Promise<UniverseNode> {
  const client =
    opts.client ??
    (await LamClient.connect({ env: opts.env, params: opts.ssi.params, name: 'lamgrow' }));
  try {
    refuseResize(client.sessionDir, 'lamgrow');
    const universe = await client.universe();
    const secret = readSecret(client.sessionDir!);
    const ctx = bootContext(opts, secret, { universe, localNodeId: client.node });
    const args: BootArgs = {
      kind: 'host',
      host: opts.host,
      words: opts.words,
      nodeId: opts.nodeId,
    };
    const { selected, nodes } = await prepare(opts, args, ctx);
    try {
      const fresh = nodes.find((n) => n.boot)!;
      await selected.actions.prepareBoot(nodes);
      await selected.actions.openSrvConnection(nodes);
      let result: Awaited<ReturnType<typeof selected.actions.startRteProcs>>;
      try {
        result = await selected.actions.startRteProcs(nodes, 'lamd', {
          rendezvous: true,
          ...progress(opts, nodes),
        });
      } finally {
        await selected.actions.closeSrvConnection();
      }
      if (result.failures.length > 0) {
        await abandonStarted([fresh], ctx, 'lamgrow failed');
        throw bootFailure('lamgrow', result.failures);
      }
      await broadcastUniverse(selected, nodes, ctx, [fresh]);
      const added = universeFromBoot([fresh])[0]!;
      await announce(client, universe, { add: added }, ctx.warn);
      await selected.actions.deallocateNodes(nodes);
      return added;
    } finally {
      await selected.close();
    }
  } finally {
    if (!opts.client) client.close();
  }
}

async function announce(
  client: LamClient,
  universe: UniverseNode[],
  change: { add?: UniverseNode; remove?: number },
  warn: (m: string) => void,
): Promise<void> {
  const results = await Promise.allSettled(
    universe.map((n) => client.request(n.id, 'universe-update', change)),
  );
  results.forEach((r, i) => {
    if (r.status === 'rejected')
      warn(`n${universe[i]!.id} did not hear of the change: ${(r.reason as Error).message}`);
  });
}
