import { BOOT_BASE_PARAMS } from '@ssi/lam';
import { describe, expect, it } from 'vitest';
import { type BootRow, bootColumns, bootVariants, planBoot, ratios } from '../src/commands/boot';
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

  it('options: defaults, host lists, --only, and typos refused', () => {
    const p = planBoot([]);
    expect(p.hosts).toEqual([1, 2, 4, 8]);
    expect(p.reps).toBe(5);
    expect(p.variants.map((v) => v.name)).toEqual(['linear', 'windowed']);
    const q = planBoot(['--hosts', '8,2,2', '--reps', '3', '--only', 'windowed', '--win-size=2']);
    expect(q.hosts).toEqual([2, 8]);
    expect(q.reps).toBe(3);
    expect(q.variants.map((v) => v.ssi.boot_base_linear_win_size)).toEqual(['2']);
    expect(() => planBoot(['--hosts', '0'])).toThrow(/--hosts/);
    expect(() => planBoot(['--hosts', '254'])).toThrow(/--hosts/);
    expect(() => planBoot(['--only', 'tm'])).toThrow(/--only: unknown "tm"/);
    expect(() => planBoot(['--reps', '0'])).toThrow(/--reps/);
    expect(() => planBoot(['--win-size', 'x'])).toThrow(/--win-size/);
    expect(() => planBoot(['--rep', '3'])).toThrow(/unknown option --rep/);
  });

  it('ratio columns divide each variant by the first one; missing ones show as -', () => {
    const v = bootVariants(5);
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
