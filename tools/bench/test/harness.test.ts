import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  formatSize,
  formatTable,
  median,
  Options,
  parseSize,
  repeat,
  writeResults,
} from '../src/index';

describe('bench harness', () => {
  it('median, repeat', async () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    let i = 0;
    const s = await repeat(3, () => ++i, 2);
    expect(s.samples).toEqual([3, 4, 5]); // two warm-up runs not recorded
    expect(s.median).toBe(4);
  });

  it('sizes and options', () => {
    expect(parseSize('8')).toBe(8);
    expect(parseSize('1k')).toBe(1024);
    expect(parseSize('16MiB')).toBe(16 * 1024 * 1024);
    expect(Number.isNaN(parseSize('x'))).toBe(true);
    expect(formatSize(1024 * 1024)).toBe('1 MiB');
    const o = new Options(['--reps', '3', '--quick', '--bw-sizes=64k,1m', 'pos']);
    expect(o.number('reps', 5)).toBe(3);
    expect(o.has('quick')).toBe(true);
    expect(o.sizes('bw-sizes', [])).toEqual([65536, 1048576]);
    expect(o.positional).toEqual(['pos']);
    expect(o.unknown(['reps', 'quick'])).toEqual(['bw-sizes']);
  });

  it('tables align and show missing values as -', () => {
    const t = formatTable(
      [
        { title: 'name', value: (r: { n: string; v?: number }) => r.n },
        { title: 'value', value: (r) => r.v, digits: 1 },
      ],
      [{ n: 'a', v: 1.25 }, { n: 'bbb' }],
    );
    expect(t.split('\n')).toEqual(['name  value', '----  -----', 'a       1.3', 'bbb       -']);
  });

  it('writes <name>-<timestamp>.json with the environment', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-'));
    try {
      const file = writeResults('demo', { rows: [1] }, dir);
      expect(file).toMatch(/demo-\d{4}-\d\d-\d\dT[\d-]+Z\.json$/);
      const doc = JSON.parse(readFileSync(file, 'utf8'));
      expect(doc.bench).toBe('demo');
      expect(doc.rows).toEqual([1]);
      expect(doc.environment.node).toBe(process.version);
    } finally {
      rmSync(dir, { recursive: true });
    }
  });
});
