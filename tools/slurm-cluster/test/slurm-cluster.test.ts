import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  killStraySlurmClusters,
  markedProcesses,
  type SlurmCluster,
  SlurmClusterError,
  slurmAvailable,
  startSlurmCluster,
} from '../src/index';

const avail = slurmAvailable();
const required = !!process.env.CI || process.env.SSI_SLURM_REQUIRED === '1';
const clusters: SlurmCluster[] = [];

afterAll(async () => {
  await Promise.all(clusters.map((c) => c.stop()));
});

describe('availability', () => {
  it('slurmAvailable() is ok here (skipped with the reason when not, except in CI)', (ctx) => {
    if (!avail.ok) {
      if (required) throw new Error(`Slurm cannot run on this CI machine: ${avail.reason}`);
      ctx.skip(avail.reason);
    }
    expect(avail).toEqual({ ok: true });
  });
});

describe.skipIf(!avail.ok)('bad options', () => {
  it('refuses a non-empty directory, one with whitespace, and a bad CPU count, starting nothing', async () => {
    const full = mkdtempSync(join(tmpdir(), 'ssi-slurm-full-'));
    try {
      writeFileSync(join(full, 'keep'), 'x');
      await expect(startSlurmCluster({ dir: full })).rejects.toThrow(/not an empty directory/);
      await expect(startSlurmCluster({ dir: join(full, 'a b') })).rejects.toThrow(/whitespace/);
      await expect(startSlurmCluster({ cpus: 0 })).rejects.toBeInstanceOf(SlurmClusterError);
      expect(markedProcesses(full)).toEqual([]);
    } finally {
      rmSync(full, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!avail.ok)('a one-node cluster', () => {
  let c: SlurmCluster;
  beforeAll(async () => {
    c = await startSlurmCluster();
    clusters.push(c);
  });

  it('is up: the node is idle and its daemons carry the cluster marker', async () => {
    const r = await c.exec('sinfo', ['-h', '-o', '%P %T %N']);
    expect(r.stdout.trim()).toBe(`debug* idle ${c.node}`);
    expect(c.env.SLURM_CONF).toBe(join(c.dir, 'slurm.conf'));
    const cmds = markedProcesses(c.dir).map((p) => p.cmd);
    for (const d of ['munged', 'slurmctld', 'slurmd']) {
      expect(cmds.some((cmd) => cmd.includes(d))).toBe(true);
    }
  });

  it('runs a batch job to COMPLETED with the Slurm environment and our own variables', async () => {
    const job = await c.sbatch('echo "job=$SLURM_JOB_ID nodes=$SLURM_JOB_NODELIST x=$X"', {
      name: 'hello',
      env: { X: 'forty-two' },
    });
    await c.waitForState(job.id, 'COMPLETED', 20_000);
    expect(job.readOutput()).toBe(`job=${job.id} nodes=${c.node} x=forty-two\n`);
  });

  it('lists a running job step with squeueSteps, and scancel leaves none of its processes', async () => {
    const job = await c.sbatch('srun --nodes=1 --ntasks-per-node=1 sleep 271', { name: 'stepper' });
    await c.waitForState(job.id, 'RUNNING', 20_000);
    const steps = await poll('step 0 of the job in squeue -s', 15_000, async () => {
      const s = await c.squeueSteps(job.id);
      return s.some((x) => x.step === '0') ? s : undefined;
    });
    expect(steps).toContainEqual({ id: `${job.id}.0`, step: '0', name: 'sleep', nodes: c.node });
    expect(steps.map((s) => s.step)).toContain('batch');
    const sleeper = () => markedProcesses(c.dir).filter((p) => p.cmd.includes('sleep 271'));
    expect(sleeper().length).toBeGreaterThan(0);
    await c.scancel(job.id);
    await c.waitForState(job.id, 'CANCELLED', 20_000);
    await poll('the job step processes to be gone after scancel', 15_000, async () =>
      sleeper().length === 0 && markedProcesses(c.dir).every((p) => !p.cmd.includes(`[${job.id}.`))
        ? true
        : undefined,
    );
  });

  it('waitForState fails at once, naming the state, when the job ends otherwise', async () => {
    const job = await c.sbatch('exit 3', { name: 'fails' });
    const err = await c.waitForState(job.id, 'RUNNING', 20_000).catch((e) => e);
    if (err instanceof SlurmClusterError && err.failure === 'JOB_STATE') {
      expect(err.message).toMatch(new RegExp(`job ${job.id} ended FAILED .*waiting for RUNNING`));
    } else {
      // it may be seen RUNNING for a moment; then it must end FAILED
      expect(err).toBe('RUNNING');
      await expect(c.waitForState(job.id, 'COMPLETED', 20_000)).rejects.toThrow(/ended FAILED/);
    }
  });

  it('waitForState times out naming the job, the awaited and the last state', async () => {
    const job = await c.sbatch('true', { name: 'held', args: ['--hold'] });
    const err = await c.waitForState(job.id, 'RUNNING', 1000).catch((e) => e);
    expect(err).toBeInstanceOf(SlurmClusterError);
    expect(err.failure).toBe('TIMEOUT');
    expect(err.message).toMatch(
      new RegExp(`job ${job.id} did not reach RUNNING within 1 s \\(last state: PENDING`),
    );
    await c.scancel(job.id);
  });

  it('every command has a timeout that names the command', async () => {
    const err = await c.exec('sleep', ['5'], { timeoutMs: 300 }).catch((e) => e);
    expect(err).toBeInstanceOf(SlurmClusterError);
    expect(err.message).toMatch(/sleep 5 did not finish within 0.3 s/);
    await expect(c.exec('no-such-slurm-command', [])).rejects.toThrow(
      /cannot run no-such-slurm-command/,
    );
  });

  it("a bad sbatch is an error with Slurm's message", async () => {
    await expect(c.sbatch('true', { args: ['--partition=nosuch'] })).rejects.toThrow(
      /sbatch .*failed \(exit 1\): .*invalid partition/i,
    );
  });

  it('stop() cancels running jobs, stops the daemons, kills what jobs left and removes the directory', async () => {
    const job = await c.sbatch('srun --nodes=1 --ntasks-per-node=1 sleep 272', { name: 'left' });
    await c.waitForState(job.id, 'RUNNING', 20_000);
    await poll('the job step to start', 15_000, async () =>
      markedProcesses(c.dir).some((p) => p.cmd.includes('sleep 272')) ? true : undefined,
    );
    await c.stop();
    expect(markedProcesses(c.dir)).toEqual([]);
    expect(existsSync(c.dir)).toBe(false);
    await c.stop(); // idempotent
  });
});

describe.skipIf(!avail.ok)('not leaving daemons behind', () => {
  const fixture = join(import.meta.dirname, 'fixtures', 'own-cluster.mts');
  const owners: ReturnType<typeof spawn>[] = [];

  // A failed test may leave its owner running, or its cluster behind a dead owner.
  afterEach(async () => {
    for (const child of owners.splice(0)) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await gone;
    }
    await killStraySlurmClusters();
  });

  async function owner(): Promise<{ child: ReturnType<typeof spawn>; dir: string }> {
    // node itself (not the tsx wrapper) must be the owner, so that signals reach it directly
    const child = spawn(process.execPath, ['--import', 'tsx', fixture], {
      cwd: join(import.meta.dirname, '..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    owners.push(child);
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => {
      out += d;
    });
    child.stderr!.on('data', (d) => {
      err += d;
    });
    const line = await poll(
      `the owner process to start its cluster (stderr: ${err})`,
      40_000,
      async () => {
        if (child.exitCode !== null) throw new Error(`owner exited ${child.exitCode}: ${err}`);
        return out.includes('\n') ? out.split('\n')[0] : undefined;
      },
    );
    return { child, dir: (JSON.parse(line!) as { dir: string }).dir };
  }

  it('SIGTERM to the owning process stops its cluster and its job', async () => {
    const { child, dir } = await owner();
    expect(markedProcesses(dir).some((p) => p.cmd.includes('sleep 300'))).toBe(true);
    child.kill('SIGTERM');
    // The owner cancels the job, stops the daemons and kills what is left: allow for a loaded
    // machine, and say what is still there if it does not happen.
    await poll(
      "every process of the SIGTERMed owner's cluster to be gone",
      40_000,
      async () => (markedProcesses(dir).length === 0 ? true : undefined),
      () => JSON.stringify(markedProcesses(dir)),
    );
    // the directory goes last, just before the owner dies of the signal
    await poll('the SIGTERMed owner to be gone', 10_000, async () =>
      child.exitCode !== null || child.signalCode !== null ? true : undefined,
    );
    expect(child.signalCode).toBe('SIGTERM');
    expect(existsSync(dir)).toBe(false);
  });

  it('after a SIGKILLed owner, killStraySlurmClusters() stops the cluster', async () => {
    const { child, dir } = await owner();
    child.kill('SIGKILL');
    await poll('the SIGKILLed owner to be gone', 10_000, async () =>
      child.exitCode !== null || child.signalCode !== null ? true : undefined,
    );
    expect(markedProcesses(dir).length).toBeGreaterThan(0);
    const report = await killStraySlurmClusters();
    expect(report.dirs).toContain(dir);
    expect(markedProcesses(dir)).toEqual([]);
    expect(existsSync(dir)).toBe(false);
  });
});

async function poll<T>(
  what: string,
  timeoutMs: number,
  fn: () => Promise<T | undefined>,
  state: () => string = () => '',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) {
      const now = state();
      throw new Error(
        `timed out after ${timeoutMs / 1000} s waiting for ${what}${now ? `; still there: ${now}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, 150));
  }
}
