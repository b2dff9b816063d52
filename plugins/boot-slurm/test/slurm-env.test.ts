import { describe, expect, it } from 'vitest';
import { slurmJob } from '../src/slurm-env';
import { runCli } from './helpers';

describe('slurmJob', () => {
  it('reads the allocation: node list, and tasks per node before CPUs per node', () => {
    expect(
      slurmJob({
        SLURM_JOB_ID: '12',
        SLURM_JOB_NODELIST: 'n[1-2]',
        SLURM_TASKS_PER_NODE: '2(x2)',
        SLURM_JOB_CPUS_PER_NODE: '4(x2)',
      }),
    ).toEqual({
      jobId: '12',
      nodeList: { text: 'n[1-2]', varName: 'SLURM_JOB_NODELIST' },
      counts: { text: '2(x2)', varName: 'SLURM_TASKS_PER_NODE' },
    });
    expect(
      slurmJob({ SLURM_JOBID: '7', SLURM_NODELIST: 'a', SLURM_JOB_CPUS_PER_NODE: '3' }),
    ).toMatchObject({
      jobId: '7',
      nodeList: { varName: 'SLURM_NODELIST' },
      counts: { text: '3', varName: 'SLURM_JOB_CPUS_PER_NODE' },
    });
  });

  it('says why it is not in an allocation', () => {
    expect(slurmJob({})).toBe('not inside a Slurm allocation: SLURM_JOB_ID is not set');
    expect(slurmJob({ SLURM_JOB_ID: '3' })).toMatch(
      /inside Slurm job 3 but SLURM_JOB_NODELIST is not set/,
    );
  });
});

// lamboot in a (pretended) allocation whose variables are wrong: the errors come before anything
// is launched, so no Slurm is needed.
const base = {
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '/',
  SLURM_JOB_ID: '4242',
  LAM_MPI_SESSION_SUFFIX: `slurm-env-${process.pid}`,
};

describe('lamboot with bad Slurm variables', () => {
  it.each([
    [
      { SLURM_JOB_NODELIST: 'node[1-4' },
      'malformed hostlist in SLURM_JOB_NODELIST at position 5: "[" is never closed',
    ],
    [
      { SLURM_JOB_NODELIST: 'node[1-2]', SLURM_TASKS_PER_NODE: '2(x3)' },
      'SLURM_TASKS_PER_NODE=2(x3) gives 3 count(s) but the job has 2 node(s) (node1,node2)',
    ],
    [
      { SLURM_JOB_NODELIST: 'a', SLURM_JOB_CPUS_PER_NODE: '2(3)' },
      'malformed SLURM_JOB_CPUS_PER_NODE at position 3: a repeat is written "(xN)"',
    ],
    [{ SLURM_JOB_NODELIST: 'a,b,a' }, 'SLURM_JOB_NODELIST=a,b,a names a twice'],
  ])('%j: a clear error, exit 1', async (vars, message) => {
    const r = await runCli('lamboot', [], { ...base, ...vars });
    expect(r.stderr).toContain(message);
    expect(r.code).toBe(1);
  });

  it('srun missing: a clear error before anything starts', async () => {
    const r = await runCli('lamboot', ['--ssi', 'boot_slurm_launcher', '/nonexistent/srun'], {
      ...base,
      SLURM_JOB_NODELIST: 'localhost',
      LAM_MPI_SESSION_HOST: 'localhost',
    });
    expect(r.stderr).toContain(
      'the Slurm launcher "/nonexistent/srun" (boot_slurm_launcher) is not an executable file',
    );
    expect(r.stderr).toContain('Nothing was started.');
    expect(r.code).toBe(1);
  });

  it('declines outside an allocation, saying why', async () => {
    const { SLURM_JOB_ID: _, ...outside } = base;
    const r = await runCli('lamboot', ['--ssi', 'boot', 'slurm'], outside);
    expect(r.stderr).toContain(
      'slurm: declined: not inside a Slurm allocation: SLURM_JOB_ID is not set',
    );
    expect(r.code).toBe(1);
  });
});
