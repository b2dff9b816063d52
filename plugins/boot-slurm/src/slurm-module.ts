import { defineModule } from '@ssi/core';
import {
  allocatedNode,
  type BootActions,
  type BootArgs,
  type BootContext,
  type BootInitResult,
  type BootModule,
  type BootNode,
  baseBootActions,
  bootableNodes,
  describeBootNode,
  type HbootConfig,
  hbootConfigFor,
  LamError,
  type RteLaunch,
  type RteOutcome,
  requireLauncher,
  type StartResult,
  verifyAllocation,
} from '@ssi/lam';
import { countsForNodes } from './counts';
import { expandHostlist } from './hostlist';
import { nodeProgram } from './node-program';
import { type SlurmJob, slurmJob } from './slurm-env';
import { SrunLauncher } from './srun-launch';

const VERSION = '1.0.0';

/** Why lamgrow and lamshrink refuse a slurm universe; recorded by every lamd. */
export const SLURM_NO_RESIZE =
  'it was booted by the slurm boot module inside Slurm job JOB, whose nodes Slurm allocated; ' +
  'ask Slurm for the nodes you need (sbatch/salloc --nodes=...) and lamboot again';

const active = new Set<SrunLauncher>();

/**
 * The slurm boot module (beyond LAM): inside a Slurm allocation it takes the nodes from
 * SLURM_JOB_NODELIST and the CPU counts from SLURM_TASKS_PER_NODE / SLURM_JOB_CPUS_PER_NODE, and
 * starts every lamd with a single `srun --ntasks-per-node=1 --kill-on-bad-exit`, so the lamds
 * are one job step that Slurm tracks, accounts for and kills.
 */
const slurm = defineModule({
  ssiApi: '1.0.0',
  type: 'boot' as const,
  // A literal, equal to the manifest's: the API this module was built for, not the host's.
  typeApi: '1.1.0',
  name: 'slurm',
  version: VERSION,
  params: {
    launcher: {
      type: 'string',
      default: 'srun',
      help: 'srun command (with extra options if needed) that starts the lamds as one job step; the module appends --nodes, --ntasks, --ntasks-per-node=1, --nodelist, --kill-on-bad-exit=1, --overlap, --input=all, --job-name and the node program',
    },
    priority: {
      type: 'int',
      default: 50,
      help: 'Priority of the slurm boot module inside a Slurm allocation (0-100); it declines outside one',
    },
  },

  init(_where, ctx: BootContext): BootInitResult | string {
    const job = slurmJob(process.env);
    if (typeof job === 'string') return job;
    const launcher = ctx.params
      .get<string>('boot_slurm_launcher')
      .trim()
      .split(/\s+/)
      .filter(Boolean);
    return {
      priority: ctx.params.get<number>('boot_slurm_priority'),
      actions: slurmActions(ctx, job, launcher),
    };
  },

  finalize() {
    for (const s of active) s.finish();
    active.clear();
  },
} satisfies BootModule);

/** The slurm module's boot actions: the framework base, with Slurm's node list and one srun. */
export function slurmActions(ctx: BootContext, job: SlurmJob, launcher: string[]): BootActions {
  const srun = new SrunLauncher(launcher, nodeProgram());
  active.add(srun);
  const noResize = SLURM_NO_RESIZE.replace('JOB', job.jobId);
  let rendezvousAt: { host: string; port: number } | undefined;

  // recon and wipe: one single-task step per node, through the base algorithm
  const startRteProc = (node: BootNode, launch: RteLaunch): Promise<RteOutcome> =>
    srun.run(node, JSON.parse(launch.stdin) as HbootConfig, launch.timeoutMs);
  const base = baseBootActions({ ctx, startRteProc, algorithm: 'linear' });
  const where = `the Slurm allocation of job ${job.jobId} (${job.nodeList.varName}=${job.nodeList.text})`;

  const actions: BootActions = {
    ...base,
    parseOptions(args: BootArgs) {
      if (args.kind === 'host') {
        throw new LamError(
          'BAD_ARGS',
          `the slurm boot module cannot add ${args.host} to a universe: the nodes of Slurm job ${job.jobId} are the ones Slurm allocated`,
        );
      }
      const schema = args.file ?? process.env.LAMBHOST;
      if (schema) {
        ctx.warn(
          `the boot schema ${schema} is ignored: the slurm boot module boots the nodes of ${where}`,
        );
      }
    },

    allocateNodes() {
      const names = expandHostlist(job.nodeList.text, job.nodeList.varName);
      const counts = job.counts
        ? countsForNodes(job.counts.text, job.counts.varName, names)
        : names.map(() => 1);
      const seen = new Set<string>();
      for (const n of names) {
        if (seen.has(n)) {
          throw new LamError(
            'BAD_ARGS',
            `${job.nodeList.varName}=${job.nodeList.text} names ${n} twice; Slurm lists each node of a job once`,
          );
        }
        seen.add(n);
      }
      const nodes = names.map((name, i) => allocatedNode(i, name, counts[i]!));
      ctx.verbose.log(
        10,
        `Slurm job ${job.jobId}: ${nodes.map((n) => `${n.name} cpu=${n.cpus}`).join(', ')}`,
      );
      return nodes;
    },

    async verifyNodes(nodes) {
      await verifyAllocation(nodes, ctx, where);
    },

    prepareBoot() {
      requireLauncher({
        program: launcher[0],
        param: 'boot_slurm_launcher',
        kind: 'Slurm launcher',
        usual: 'srun',
        hint: 'srun comes with Slurm (slurm-client): is it installed on this node?',
      });
    },

    async openSrvConnection(nodes) {
      rendezvousAt = await base.openSrvConnection(nodes);
      return rendezvousAt;
    },

    async startRteProcs(nodes, which, options): Promise<StartResult> {
      if (which !== 'lamd') return base.startRteProcs.call(actions, nodes, which, options);
      const targets = bootableNodes(nodes);
      const configs: Record<string, HbootConfig> = {};
      for (const n of targets) {
        const config = hbootConfigFor(n, 'lamd', ctx, rendezvousAt);
        if (config.mode === 'lamd') config.lamd.noResize = noResize;
        configs[n.name] = config;
        ctx.verbose.log(100, `starting lamd on ${describeBootNode(n)}`);
      }
      const result: StartResult = { started: 0, failures: [] };
      const fail = (list: BootNode[], error: Error) => {
        for (const n of list) {
          result.failures.push({ node: n, error });
          options.onNodeError?.(n, error);
        }
      };
      try {
        await srun.startLamds(targets, configs);
      } catch (err) {
        fail(targets, err as Error);
        return result;
      }
      const pending = new Set(targets);
      const ended = srun.failure();
      while (pending.size > 0) {
        try {
          const node = await Promise.race([actions.receiveLamdInfo([...pending]), ended]);
          pending.delete(node);
          node.boot = false;
          result.started++;
          options.onNode?.(node, { stdout: '', stderr: '' });
        } catch (err) {
          // srun names the node whose task failed ("srun: error: node3: task 2: Exited ...")
          const named = [...pending].filter((n) =>
            new RegExp(`\\b${n.name.replace(/[.]/g, '\\.')}\\b`).test((err as Error).message),
          );
          fail(named.length > 0 ? named : [...pending], err as Error);
          break;
        }
      }
      if (pending.size === 0) srun.markAllUp();
      return result;
    },

    async closeSrvConnection() {
      try {
        await base.closeSrvConnection();
      } finally {
        srun.finish();
      }
    },

    deallocateNodes() {
      srun.finish();
    },
  };
  return actions;
}

export default slurm;
