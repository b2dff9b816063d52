import { LamError } from '../errors';
import { lamSeconds } from '../params';
import { findProgram } from './find-program';
import type { BootContext, BootNode } from './types';
import { check127Rule, checkDistinctAddresses, markLocalNode, resolveAddresses } from './verify';

/**
 * Nodes a batch system allocated (PBS's node file, Slurm's node list) rather than a boot schema:
 * what the tm and slurm boot modules share.
 */

/** Node `id` of the allocation: `name` with `cpus` CPUs; `where` says which line named it. */
export function allocatedNode(
  id: number,
  name: string,
  cpus: number,
  where?: BootNode['where'],
): BootNode {
  return {
    id,
    name,
    address: '',
    cpus,
    schedulable: true,
    boot: true,
    origin: false,
    me: false,
    keyval: { hostname: name, cpu: String(cpus) },
    ...(where ? { where } : {}),
  };
}

/**
 * Resolves the nodes' addresses and checks them; lamboot must run on one of them (the batch
 * system starts the job script there). `source` names the allocation for messages.
 */
export async function verifyAllocation(
  nodes: BootNode[],
  ctx: BootContext,
  source: string,
): Promise<void> {
  await resolveAddresses(nodes, lamSeconds(ctx.params, 'lam_connect_timeout'));
  markLocalNode(nodes, ctx.localHost, source).origin = true;
  check127Rule(nodes);
  checkDistinctAddresses(nodes);
}

/** The batch system's launcher a boot module starts lamds with, for `requireLauncher`. */
export interface LauncherSpec {
  /** the program: the first word of the parameter's value */
  program: string | undefined;
  /** the parameter that names it (`boot_tm_launcher`) */
  param: string;
  /** what it is, for messages ("PBS launcher") */
  kind: string;
  /** the program it normally is (`pbsdsh`) */
  usual: string;
  /** where it normally comes from, a sentence */
  hint: string;
}

/** Checks, before anything starts, that the batch system's launcher (pbsdsh, srun) can run here. */
export function requireLauncher(l: LauncherSpec): void {
  if (!l.program) throw new LamError('BAD_CONFIG', `${l.param} is empty; set it to ${l.usual}`);
  if (findProgram(l.program)) return;
  throw new LamError(
    'LAUNCH_FAILED',
    `the ${l.kind} "${l.program}" (${l.param}) is not ${l.program.includes('/') ? 'an executable file' : 'on PATH'}; ` +
      `${l.hint} Nothing was started.`,
  );
}
