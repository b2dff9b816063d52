import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BOOT_BASE_PARAMS } from '@ssi/lam';
import type { Testbed } from '@ssi/testbed';
import { describe, expect, it } from 'vitest';
import {
  type BootRow,
  bootColumns,
  bootVariants,
  pbsdshStandIn,
  planBoot,
  ratios,
} from '../src/commands/boot';
import {
  type JobSample,
  jobOrder,
  parseJobOutput,
  REPORT_TAG,
  SLURM_VARIANTS,
  slurmColumns,
  summarizeJob,
} from '../src/commands/boot-slurm';
import { formatTable, stat } from '../src/harness';

describe('boot benchmark: plan and table', () => {
  it('the variants set the boot base parameters by their real names and values', () => {
    const [linear, windowed] = bootVariants(3);
    const names = new Set(Object.keys(BOOT_BASE_PARAMS));
    for (const v of [linear!, windowed!]) {
      expect(v.ssi.boot).toBe('rsh');
      for (const k of Object.keys(v.ssi).filter((k) => k !== 'boot')) expect(names).toContain(k);
    }
    // the two values runBootAlgorithm accepts; the window size is not left to the default
    expect(linear!.ssi.boot_base_algorithm).toBe('linear');
    expect(windowed!.ssi).toMatchObject({
      boot_base_algorithm: 'linear_windowed',
      boot_base_linear_win_size: '3',
    });
    expect(BOOT_BASE_PARAMS.boot_base_linear_win_size.default).toBe(5);
    expect(planBoot([]).winSize).toBe(5);
  });

  it('the tm variant boots with tm in a reproduced PBS job on the measured hosts', () => {
    const tm = bootVariants(4).find((v) => v.name === 'tm')!;
    expect(tm.ssi).toEqual({ boot: 'tm', boot_base_linear_win_size: '4' });
    expect(existsSync(pbsdshStandIn())).toBe(true);
    const workDir = mkdtempSync(join(tmpdir(), 'ssi-bench-boot-test-'));
    try {
      const hosts = [
        { name: 'h1', address: '127.0.0.2' },
        { name: 'h2', address: '127.0.0.3' },
      ];
      const testbed = { sshCommand: ['ssh', '-F', '/tb/ssh_config'] } as unknown as Testbed;
      const env = tm.env!({ testbed, hosts, schema: '/x', workDir });
      expect(readFileSync(env.PBS_NODEFILE!, 'utf8')).toBe('127.0.0.2\n127.0.0.3\n');
      expect(env).toMatchObject({
        PBS_ENVIRONMENT: 'PBS_BATCH',
        SSI_PBSDSH_SSH: 'ssh -F /tb/ssh_config',
      });
      expect(env.PBS_JOBID).toMatch(/\.bench-standin$/);
      expect(env.PATH!.split(':')[0]).toBe(join(workDir, 'pbs-bin'));
      expect(existsSync(join(workDir, 'pbs-bin', 'pbsdsh'))).toBe(true);
    } finally {
      rmSync(workDir, { recursive: true, force: true });
    }
  });

  it('options: defaults, host lists, --only, and typos refused', () => {
    const p = planBoot([]);
    expect(p.hosts).toEqual([1, 2, 4, 8]);
    expect(p.reps).toBe(5);
    expect(p.variants.map((v) => v.name)).toEqual(['linear', 'windowed', 'tm']);
    expect(p.slurm).toBe('auto');
    const q = planBoot(['--hosts', '8,2,2', '--reps', '3', '--only', 'windowed', '--win-size=2']);
    expect(q.hosts).toEqual([2, 8]);
    expect(q.reps).toBe(3);
    expect(q.variants.map((v) => v.ssi.boot_base_linear_win_size)).toEqual(['2']);
    expect(() => planBoot(['--hosts', '0'])).toThrow(/--hosts/);
    expect(() => planBoot(['--hosts', '254'])).toThrow(/--hosts/);
    expect(planBoot(['--only', 'tm']).variants.map((v) => v.name)).toEqual(['tm']);
    expect(planBoot(['--only', 'tm']).slurm).toBe('off');
    // slurm alone needs no testbed variant; asked for, it must run
    expect(planBoot(['--only', 'slurm'])).toMatchObject({ variants: [], slurm: 'on' });
    expect(planBoot(['--only', 'linear,slurm']).variants.map((v) => v.name)).toEqual(['linear']);
    expect(() => planBoot(['--only', 'pbs'])).toThrow(
      /--only: unknown "pbs" \(use linear,windowed,tm,slurm\)/,
    );
    expect(() => planBoot(['--only', ''])).toThrow(/--only/);
    expect(() => planBoot(['--reps', '0'])).toThrow(/--reps/);
    expect(() => planBoot(['--win-size', 'x'])).toThrow(/--win-size/);
    expect(() => planBoot(['--rep', '3'])).toThrow(/unknown option --rep/);
  });

  it('ratio columns divide each variant by the first one; missing ones show as -', () => {
    const v = bootVariants(5).slice(0, 2);
    const rows: BootRow[] = [
      { hosts: 2, results: { linear: stat([100, 300, 200]), windowed: stat([150, 50, 100]) } },
      { hosts: 4, results: { windowed: stat([80]) } },
    ];
    expect(ratios(rows[0]!, v)).toEqual({ windowed: 0.5 });
    expect(formatTable(bootColumns(v), rows).split('\n')).toEqual([
      'hosts  linear ms  windowed(5) ms  windowed/linear',
      '-----  ---------  --------------  ---------------',
      '    2        200             100             0.50',
      '    4          -              80                -',
    ]);
  });
});

describe('boot benchmark: the real Slurm part', () => {
  const sample = (variant: 'rsh' | 'slurm', rep: number, bootMs: number): JobSample => ({
    variant,
    rep,
    bootMs,
    haltMs: bootMs / 10,
    lamdPid: 100 + rep,
  });
  const line = (m: unknown) => `${REPORT_TAG} ${JSON.stringify(m)}\n`;

  it('rsh is the baseline, then slurm, each by --ssi boot; repetitions alternate the order', () => {
    expect(SLURM_VARIANTS.map((v) => v.ssi)).toEqual([{ boot: 'rsh' }, { boot: 'slurm' }]);
    expect([-1, 0, 1, 2].map(jobOrder)).toEqual([
      ['slurm', 'rsh'],
      ['rsh', 'slurm'],
      ['slurm', 'rsh'],
      ['rsh', 'slurm'],
    ]);
  });

  it("the job's output: report lines in order, other lines and a line still being written skipped", () => {
    const a = sample('rsh', -1, 500);
    const b = sample('slurm', -1, 700);
    const text =
      'srun: some message\n' +
      line({ sample: a }) +
      'lamboot: warning: something\n' +
      line({ sample: b }) +
      `${REPORT_TAG} {"sample":{"varia`;
    expect(parseJobOutput(text)).toEqual({ samples: [a, b], done: false });
    expect(
      parseJobOutput(text.slice(0, text.lastIndexOf(REPORT_TAG)) + line({ done: true })),
    ).toEqual({ samples: [a, b], done: true });
    expect(parseJobOutput(line({ sample: a }) + line({ error: 'lamboot exited with 1' }))).toEqual({
      samples: [a],
      done: false,
      error: 'lamboot exited with 1',
    });
    expect(parseJobOutput('')).toEqual({ samples: [], done: false });
  });

  it('medians leave the warm-up out (lamhalt times keep it); the ratio is slurm/rsh', () => {
    const samples = [
      sample('slurm', -1, 2000),
      sample('rsh', -1, 1000),
      sample('rsh', 0, 400),
      sample('slurm', 0, 600),
      sample('slurm', 1, 500),
      sample('rsh', 1, 500),
      sample('rsh', 2, 450),
      sample('slurm', 2, 700),
    ];
    const row = summarizeJob(samples);
    expect(row.results.rsh).toMatchObject({ median: 450, samples: [400, 500, 450] });
    expect(row.results.slurm).toMatchObject({ median: 600, samples: [600, 500, 700] });
    expect(row.lamhaltMs).toEqual({ rsh: [100, 40, 50, 45], slurm: [200, 60, 50, 70] });
    expect(row.ratio).toBeCloseTo(600 / 450);
    expect(formatTable(slurmColumns(), [row]).split('\n')).toEqual([
      'nodes  rsh ms  slurm ms  slurm/rsh',
      '-----  ------  --------  ---------',
      '    1     450       600       1.33',
    ]);
    // a job that ended after the warm-up: no medians, no ratio
    const early = summarizeJob(samples.slice(0, 2));
    expect(early.results).toEqual({});
    expect(early.ratio).toBeNaN();
  });
});
