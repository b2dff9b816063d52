import { defineModule } from '@ssi/core';
import {
  type BootContext,
  type BootInitResult,
  type BootModule,
  type BootNode,
  baseBootActions,
  findProgram,
  type RteLaunch,
  type RteOutcome,
  runAgent,
  runLocalHboot,
} from '@ssi/lam';
import { agentArgv, parseAgent } from './agent';
import { classifyOutcome } from './classify';

const VERSION = '1.0.0';

/**
 * The rsh boot module (Ch. 4.2.3): lamds are started through a remote shell, `ssh` by default,
 * one hboot per node; the node lamboot runs on is started directly. Everything else (schema,
 * algorithms, rendezvous) is the boot framework base.
 */
const rsh = defineModule({
  ssiApi: '1.0.0',
  type: 'boot' as const,
  // A literal, equal to the manifest's: the API this module was built for, not the host's.
  typeApi: '1.1.0',
  name: 'rsh',
  version: VERSION,
  params: {
    agent: {
      type: 'string',
      default: 'ssh',
      help: 'Remote shell that starts hboot on each node: "ssh", "rsh", or a command with options such as "ssh -F /path/config"',
    },
    username: {
      type: 'string',
      default: '',
      help: 'Login name on every remote node (a user= in the boot schema wins); empty: the current user',
    },
    priority: {
      type: 'int',
      default: 10,
      help: 'Priority of the rsh boot module (0-100); batch-system modules rank higher inside their jobs',
    },
  },

  init(_where, ctx: BootContext): BootInitResult | string {
    const agent = parseAgent(ctx.params.get<string>('boot_rsh_agent'));
    if (agent.length === 0) return 'boot_rsh_agent is empty';
    if (!findProgram(agent[0]!))
      return `the remote shell "${agent[0]}" is not on PATH (boot_rsh_agent)`;
    const username = ctx.params.get<string>('boot_rsh_username');
    const startRteProc = (node: BootNode, launch: RteLaunch) =>
      launchOn(node, launch, agent, node.user ?? (username || undefined));
    return {
      priority: ctx.params.get<number>('boot_rsh_priority'),
      actions: baseBootActions({ ctx, startRteProc }),
    };
  },
} satisfies BootModule);

/** Runs hboot on one node: directly on this node, through the remote shell elsewhere. */
async function launchOn(
  node: BootNode,
  launch: RteLaunch,
  agent: string[],
  user: string | undefined,
): Promise<RteOutcome> {
  const argv = agentArgv(agent, node.name, user, launch.command);
  const result = node.me
    ? await runLocalHboot(launch)
    : await runAgent(argv, launch.stdin, launch.timeoutMs);
  const error = classifyOutcome(
    result,
    node,
    launch.which,
    node.me ? 'hboot' : agent.join(' '),
    launch.timeoutMs,
  );
  if (error) throw error;
  return { stdout: result.stdout, stderr: result.stderr };
}

export default rsh;
