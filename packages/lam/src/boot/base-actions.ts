import { LamError } from '../errors';
import { lamSeconds } from '../params';
import { type AlgorithmName, runBootAlgorithm } from './algorithms';
import { sendUniverse, TcpRendezvous, universeFromBoot } from './rendezvous';
import { defaultSchema, parseBootSchema, readBootSchema } from './schema';
import type { BootActions, BootArgs, BootContext, BootNode, RteLaunch, RteOutcome } from './types';
import { check127Rule, checkDistinctAddresses, markLocalNode, resolveAddresses } from './verify';

export interface BaseActionsOptions {
  ctx: BootContext;
  /** launch one run-time process on one node: the part every module writes (App. B.2.11) */
  startRteProc(node: BootNode, launch: RteLaunch): Promise<RteOutcome>;
  startApplication?(argvs: string[][], node: BootNode): Promise<number>;
  /** force an algorithm instead of boot_base_algorithm */
  algorithm?: AlgorithmName;
  env?: Record<string, string | undefined>;
}

/**
 * A complete set of boot actions built from the framework base (App. B.1): schema parsing or
 * lamgrow's node list, verification, the linear / windowed algorithms and the TCP rendezvous.
 * A module supplies `startRteProc` and may override any action by spreading the result:
 * `{ ...base, receiveLamdInfo }`. The algorithms call the actions of the object
 * `startRteProcs` is called on, so such overrides are the ones used during a boot.
 */
export function baseBootActions(opts: BaseActionsOptions): BootActions {
  const { ctx } = opts;
  const env = opts.env ?? process.env;
  let args: BootArgs = { kind: 'schema' };
  let schemaName = '(default: this host)';
  const rendezvous = new TcpRendezvous({
    secret: ctx.secret,
    timeoutMs: ctx.timeoutMs,
    log: (m) => ctx.verbose.log(0, m),
  });

  const actions: BootActions = {
    parseOptions(a) {
      args = a;
      if (a.kind === 'schema') schemaName = a.file ?? env.LAMBHOST ?? schemaName;
    },

    allocateNodes() {
      if (args.kind === 'host') return growNodes(ctx, args);
      const file = args.file ?? env.LAMBHOST;
      const schema = file ? readBootSchema(file) : defaultSchema(ctx.localHost);
      for (const w of schema.warnings) ctx.warn(w);
      return schema.nodes;
    },

    async verifyNodes(nodes) {
      await resolveAddresses(nodes, lamSeconds(ctx.params, 'lam_connect_timeout'));
      if (args.kind === 'schema') {
        markLocalNode(nodes, ctx.localHost, schemaName).origin = true;
      } else if (!nodes.some((n) => n.me)) {
        throw new LamError('BAD_ARGS', 'lamgrow must run on a node of the universe');
      }
      check127Rule(nodes);
      checkDistinctAddresses(nodes);
    },

    prepareBoot() {},

    startRteProcs(nodes, which, options) {
      // `this`: the module's actions when it spread these and overrode some of them
      const self: BootActions = this && typeof this === 'object' ? this : actions;
      return runBootAlgorithm(
        {
          actions: self,
          ctx,
          nodes,
          which,
          options: { ...options, rendezvousAt: rendezvous.address },
        },
        opts.algorithm,
      );
    },

    deallocateNodes() {
      // Nothing to free in JavaScript; modules holding external resources override this.
    },

    startRteProc: (node, launch) => opts.startRteProc(node, launch),
    ...(opts.startApplication ? { startApplication: opts.startApplication } : {}),

    openSrvConnection(nodes) {
      const me = nodes.find((n) => n.me);
      if (!me)
        throw new LamError('BAD_ARGS', 'the rendezvous needs the local node in the node list');
      return rendezvous.open(me.address, nodes);
    },
    receiveLamdInfo: (nodes) => rendezvous.receive(nodes),
    closeSrvConnection: () => rendezvous.close(),
    sendUniverseInfo(nodes, which) {
      return sendUniverse(nodes[which]!, universeFromBoot(nodes), ctx.secret, ctx.timeoutMs);
    },
  };
  return actions;
}

/**
 * lamgrow's node list (App. B.1.12): the running universe, none of it to boot, plus the new
 * host with NT_BOOT set.
 */
export function growNodes(ctx: BootContext, args: Extract<BootArgs, { kind: 'host' }>): BootNode[] {
  const universe = ctx.universe ?? [];
  if (universe.length === 0) throw new LamError('NO_UNIVERSE', 'lamgrow needs a running universe');
  const nodes: BootNode[] = universe.map((u) => ({
    id: u.id,
    name: u.name,
    address: u.address,
    cpus: u.cpus,
    ...(u.user ? { user: u.user } : {}),
    schedulable: u.schedulable,
    boot: false,
    origin: u.origin,
    me: u.id === ctx.localNodeId,
    keyval: { hostname: u.name },
    port: u.port,
    pid: u.pid,
  }));
  const taken = universe.find((u) => u.name === args.host);
  if (taken) {
    throw new LamError('BAD_ARGS', `${args.host} is already in the universe as n${taken.id}`);
  }
  const id = args.nodeId ?? Math.max(...universe.map((u) => u.id)) + 1;
  if (universe.some((u) => u.id === id)) {
    throw new LamError('BAD_ARGS', `node id n${id} is already in use`);
  }
  const [fresh] = parseBootSchema(
    [args.host, ...(args.words ?? [])].join(' '),
    'lamgrow arguments',
  ).nodes;
  nodes.push({ ...fresh!, id, boot: true, origin: false, me: false });
  return nodes;
}
