import { describe, expect, it } from 'vitest';
import { planCr } from '../src/commands/cr-options';
import {
  parsePlans,
  parsePlansOutput,
  planColumns,
  planFlags,
  planRow,
  withBaseline,
} from '../src/commands/cr-plans';
import { formatTable } from '../src/harness';

describe('cr benchmark, plans part: options, job output, table', () => {
  it('--plans runs the plans part, local always included as the baseline; typos refused', () => {
    const p = planCr(['--plans', 'parity']);
    expect(p.parts).toEqual(['plans']);
    expect(p.plansPart).toEqual({
      plans: ['local', 'parity'],
      sizes: [1024 ** 2, 64 * 1024 ** 2],
      np: 4,
      paritySet: 2,
      checkpoints: 3,
    });
    expect(planCr([]).parts).not.toContain('plans'); // hundreds of MB: only when asked
    expect(planCr(['--parts', 'coord', '--plans', 'duplicate']).parts).toEqual(['coord', 'plans']);
    expect(() => parsePlans('local,raid')).toThrow(
      '--plans: no plan "raid" (choose from local,duplicate,parity)',
    );
    expect(planFlags('parity', '/fs', 3)).toEqual([
      '--ssi',
      'crlam_self_plan',
      'parity',
      '--ssi',
      'crlam_self_second_dir',
      '/fs',
      '--ssi',
      'crlam_self_parity_set',
      '3',
    ]);
    expect(planFlags('local', '/fs', 3)).toEqual(['--ssi', 'crlam_self_plan', 'local']);
  });

  it('reads the CRPLANS line and refuses a malformed one', () => {
    const line = { np: 4, bytes: 10, ms: [5, 6], heldMs: [1, 2], series: [2, 3] };
    const text = `[1] noise\n[0] CRPLANS ${JSON.stringify(line)}\n`;
    expect(parsePlansOutput(text, 4, 10, 2)).toEqual(line);
    expect(() => parsePlansOutput(text, 4, 10, 3)).toThrow(/malformed CRPLANS line/);
    expect(() => parsePlansOutput('nothing', 4, 10, 2)).toThrow('expected one CRPLANS line, got 0');
  });

  it('ratios against local of the same size', () => {
    const s = (ms: number, held: number) => ({
      np: 4,
      bytes: 1,
      ms: [ms],
      heldMs: [held],
      series: [2],
    });
    const rows = withBaseline([
      planRow('local', 1, [s(100, 80)], { primary: 400, second: 0 }),
      planRow('duplicate', 1, [s(300, 40)], { primary: 400, second: 400 }),
    ]);
    const table = formatTable(planColumns(), rows);
    expect(table).toMatch(/duplicate\s+300\.0\s+3\.00\s+40\.0\s+0\.50\s+0\.0\s+0\.0\s+2\.00/);
  });
});
