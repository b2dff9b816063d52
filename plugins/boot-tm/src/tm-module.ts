import { homedir } from 'node:os';
import { join } from 'node:path';
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
  type HbootConfig,
  LamError,
  type RteLaunch,
  type RteOutcome,
  requireLauncher,
  verifyAllocation,
} from '@ssi/lam';
import { nodeProgram } from './node-program';
import { readNodeFile } from './nodefile';
import { type PbsJob, pbsJob } from './pbs-env';
import { TmLauncher } from './tm-launch';

const VERSION = '1.0.0';

/** The launchers of the boots in progress, so that finalize can stop what a failed boot left. */
const active = new Set<TmLauncher>();

/** Why lamgrow and lamshrink refuse a tm universe (Ch. 4.3.5); recorded by every lamd. */
export const TM_NO_RESIZE =
  'it was booted by the tm boot module inside PBS job JOB, whose nodes PBS fixed when the job ' +
  'started (LAM refuses lamgrow and lamshrink under tm too); ask PBS for the nodes you need (qsub -l nodes=...) and lamboot again';

/**
 * The PBS `tm` boot module (Ch. 4.1.3, 4.2.4, 4.3.5): inside a PBS job it takes the nodes from
 * the job's node file and starts one lamd per node through PBS's task manager (`pbsdsh -h`,
 * which spawns through tm_spawn), so PBS accounts for every process and can kill it. The
 * linear-windowed algorithm launches node after node without waiting for call backs.
 */
const tm = defineModule({
  ssiApi: '1.0.0',
  type: 'boot' as const,
  // A literal, equal to the manifest's: the API this module was built for, not the host's.
  typeApi: '1.1.0',
  name: 'tm',
  version: VERSION,
  params: {
    launcher: {
      type: 'string',
      default: 'pbsdsh',
      help: 'Command that starts a task on one node of the PBS job through the task manager; the module appends "-h <node> <node program> <file>"',
    },
    spool_dir: {
      type: 'string',
      default: '~/.ssi/boot-tm',
      help: 'Directory every node of the job shares (a home directory is), where each lamd finds its boot configuration (mode 0600, deleted when read: PBS tasks have no stdin)',
    },
    priority: {
      type: 'int',
      default: 50,
      help: 'Priority of the tm boot module inside a PBS job (0-100); it declines outside one',
    },
  },

  init(_where, ctx: BootContext): BootInitResult | string {
    const job = pbsJob(process.env);
    if (typeof job === 'string') return job;
    const launcher = ctx.params.get<string>('boot_tm_launcher').trim().split(/\s+/).filter(Boolean);
    const spool = expandHome(ctx.params.get<string>('boot_tm_spool_dir'));
    return {
      priority: ctx.params.get<number>('boot_tm_priority'),
      actions: tmActions(ctx, job, launcher, spool),
    };
  },

  finalize() {
    for (const tasks of active) tasks.finish();
    active.clear();
  },
} satisfies BootModule);

function expandHome(dir: string): string {
  if (dir === '~') return homedir();
  return dir.startsWith('~/') ? join(homedir(), dir.slice(2)) : dir;
}

/** The tm module's boot actions: the framework base, with the node list and launch of PBS. */
export function tmActions(
  ctx: BootContext,
  job: PbsJob,
  launcher: string[],
  spoolDir: string,
): BootActions {
  const tasks = new TmLauncher(launcher, spoolDir, job, nodeProgram());
  active.add(tasks);
  const noResize = TM_NO_RESIZE.replace('JOB', job.jobId);

  const startRteProc = async (node: BootNode, launch: RteLaunch): Promise<RteOutcome> => {
    const config = JSON.parse(launch.stdin) as HbootConfig;
    if (config.mode === 'lamd') {
      config.lamd.noResize = noResize;
      await tasks.startLamd(node, config);
      return { stdout: '', stderr: '' };
    }
    return tasks.run(node, config, launch.timeoutMs);
  };
  const base = baseBootActions({ ctx, startRteProc, algorithm: 'linear_windowed' });
  const where = `the PBS node file ${job.nodeFile} (PBS_NODEFILE)`;

  return {
    ...base,
    parseOptions(args: BootArgs) {
      if (args.kind === 'host') {
        throw new LamError(
          'BAD_ARGS',
          `the tm boot module cannot add ${args.host} to a universe: the nodes of PBS job ${job.jobId} are fixed by PBS (lamgrow and lamshrink are not supported under tm)`,
        );
      }
      const schema = args.file ?? process.env.LAMBHOST;
      if (schema) {
        ctx.warn(
          `the boot schema ${schema} is ignored: the tm boot module boots the nodes of PBS job ${job.jobId} from ${where}`,
        );
      }
    },

    allocateNodes() {
      const nodes = readNodeFile(job.nodeFile).map((n, i) =>
        allocatedNode(i, n.name, n.cpus, { file: job.nodeFile, line: n.line }),
      );
      ctx.verbose.log(
        10,
        `PBS job ${job.jobId}: ${nodes.length} node(s) from ${job.nodeFile}: ${nodes.map((n) => `${n.name} cpu=${n.cpus}`).join(', ')}`,
      );
      return nodes;
    },

    async verifyNodes(nodes) {
      await verifyAllocation(nodes, ctx, where);
    },

    prepareBoot() {
      requireLauncher({
        program: launcher[0],
        param: 'boot_tm_launcher',
        kind: 'PBS launcher',
        usual: 'pbsdsh',
        hint: 'inside a PBS job pbsdsh is there: is PBS (Torque, OpenPBS, PBS Pro) installed on this node?',
      });
      tasks.prepare();
    },

    /** A node's lamd called back, or its launcher ended first: whichever happens first. */
    async receiveLamdInfo(nodes) {
      const node = await Promise.race([
        base.receiveLamdInfo(nodes),
        ...nodes.map((n) => tasks.failure(n)),
      ]);
      tasks.markUp(node);
      return node;
    },

    /** No more call backs: launchers whose lamd never called back are stopped. */
    async closeSrvConnection() {
      try {
        await base.closeSrvConnection();
      } finally {
        tasks.finish();
      }
    },

    deallocateNodes() {
      tasks.finish();
    },
  };
}

export default tm;
