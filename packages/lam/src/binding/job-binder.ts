import { type BindPlan, type BindPolicy, planBinding } from './bind-plan';
import { boundArgv, findTaskset, programRuns } from './bound-command';
import { formatCpuList } from './cpu-list';
import { type NodeCpus, readNodeCpus } from './node-cpus';

/** How a spawn request asks to be bound: its job's policy, its slot among the job's ranks here. */
export interface BindRequest {
  to: BindPolicy;
  /** This process's index among the job's processes on this node (0-based). */
  slot: number;
  /** How many processes of the job this node runs. */
  of: number;
  /**
   * More processes here than CPUs: bind them in blocks of consecutive slots, one per CPU, when
   * that puts at most this many on a CPU (`lam_bind_oversubscribed`); 0 or absent: not bound.
   */
  oversubscribed?: number;
}

/** What a started process got. */
export interface Binding {
  /** The CPUs it is bound to (`0`, `2-3`), or undefined: not bound. */
  cpus?: string;
  /** Why (one line, for `mpirun -v`). */
  reason: string;
}

/**
 * Binds the processes of the jobs one launcher (a lamd, the test launcher) starts on its node:
 * one plan per job, made when the job's first process here starts (`planBinding`), kept until
 * the job has ended here, so the jobs it starts one after another or at once never share a CPU.
 * Jobs of other launchers (another universe, another user, Open MPI) are seen through their
 * pinned processes (`heldCpus`) when a plan is made: two launchers starting jobs in the same
 * instant can still pick the same cores (Open MPI does not coordinate jobs at all).
 */
export class JobBinder {
  private readonly plans = new Map<string, BindPlan>();

  constructor(
    private readonly nodeCpus: () => NodeCpus = readNodeCpus,
    private readonly taskset: () => string | null = findTaskset,
  ) {}

  /**
   * The argv that starts `argv` for `job` as `req` asks, and the binding it gets. `env` and
   * `cwd` are the process's (a program that cannot be found is started unbound, to fail as it
   * would without the binding).
   */
  bind(
    job: string | undefined,
    req: BindRequest | undefined,
    argv: readonly string[],
    where: { path: string; cwd: string },
  ): { argv: string[]; binding?: Binding } {
    if (!req) return { argv: [...argv] };
    if (job === undefined) {
      return { argv: [...argv], binding: { reason: 'not bound: the process belongs to no job' } };
    }
    let plan = this.plans.get(job);
    if (!plan) {
      plan = this.newPlan(req);
      this.plans.set(job, plan);
    }
    const cpus = plan.cpus?.[req.slot];
    if (!plan.cpus) return { argv: [...argv], binding: { reason: plan.reason } };
    if (!cpus) {
      const reason = `not bound: slot ${req.slot} is beyond the ${plan.cpus.length} the job was planned with here`;
      return { argv: [...argv], binding: { reason } };
    }
    const taskset = this.taskset();
    if (!taskset || !programRuns(argv[0]!, where.path, where.cwd)) {
      const reason = taskset ? 'not bound: program not found' : 'not bound: taskset not found';
      return { argv: [...argv], binding: { reason } };
    }
    return {
      argv: boundArgv(taskset, cpus, argv),
      binding: { cpus: formatCpuList(cpus), reason: plan.reason },
    };
  }

  /** The job has no process here any more: its CPUs are free for the next job. */
  jobEnded(job: string): void {
    this.plans.delete(job);
  }

  /** The plan of every job that still has CPUs here (for laminfo-like reports and tests). */
  reservedCpus(): number[] {
    const all: number[] = [];
    for (const plan of this.plans.values()) for (const c of plan.cpus ?? []) all.push(...c);
    return all.sort((a, b) => a - b);
  }

  private newPlan(req: BindRequest): BindPlan {
    if (req.to === 'none') return planBinding('none', req.of, { allowed: [], cores: [], held: [] });
    return planBinding(
      req.to,
      req.of,
      this.nodeCpus(),
      this.reservedCpus(),
      req.oversubscribed ?? 0,
    );
  }
}
