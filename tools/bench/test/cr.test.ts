import { describe, expect, it } from 'vitest';
import { CRTCP, everyN, mpirunFlags, planCr, TCP } from '../src/commands/cr-options';
import { parseCoordOutput, parseHeatOutput, stripRank } from '../src/commands/cr-output';
import {
  coordColumns,
  coordRow,
  coordTargetMs,
  heatColumns,
  linearFit,
  overheadPct,
  pingColumns,
} from '../src/commands/cr-results';
import { formatTable, stat } from '../src/harness';

const phase = (ms: number) => ({
  prepareMs: ms,
  savedMs: 2 * ms,
  drainMs: ms / 2,
  saveMs: ms,
  drainSaveMs: 1.5 * ms,
  commitMs: 3,
});

describe('cr benchmark: plan, job output, tables', () => {
  it('options: defaults, lists sorted once, typos and bad values refused', () => {
    const p = planCr([]);
    expect(p.parts).toEqual(['pingpong', 'heat', 'coord', 'interval']);
    expect(p.reps).toBe(5);
    expect(p.nps).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(p.checkpoints).toBe(10);
    expect(p.heatNp).toBe(4);
    expect(p.heatArgs).toEqual(['200', '1e-4']);
    expect(p.points.map((x) => x.size)).toEqual([0, 1024, 65536, 1024 ** 2, 4 * 1024 ** 2]);
    expect(p.heatColumns.map((c) => c.key)).toEqual(['tcp', 'crtcp', 'every1s', 'every2s']);

    const q = planCr(['--parts', 'interval,coord', '--np', '8,2,2', '--intervals=3', '--quick']);
    expect(q.parts).toEqual(['coord', 'interval']); // table order
    expect(q.nps).toEqual([2, 8]);
    expect(q.reps).toBe(2);
    expect(q.checkpoints).toBe(3);
    // interval alone compares against crtcp+cr self without checkpoints, not against tcp
    expect(q.heatColumns.map((c) => c.key)).toEqual(['crtcp', 'every3s']);
    expect(planCr(['--parts', 'heat']).heatColumns.map((c) => c.key)).toEqual(['tcp', 'crtcp']);
    expect(planCr(['--parts', 'coord']).heatColumns).toEqual([]);

    expect(() => planCr(['--parts', 'pingpong,restart'])).toThrow(/no part "restart"/);
    expect(() => planCr(['--np', '0'])).toThrow(/--np: bad rank count "0"/);
    expect(() => planCr(['--np'])).toThrow(/--np needs a comma-separated list/);
    expect(() => planCr(['--intervals', '0.5'])).toThrow(/bad interval/);
    expect(() => planCr(['--heat-args', '200'])).toThrow(/--heat-args needs N,TOL/);
    expect(planCr(['--cpus', 'none']).cpus).toBeNull();
    expect(planCr([]).pollUs).toBeNull();
    expect(planCr(['--poll-us', '0']).pollUs).toBe(0);
    expect(() => planCr(['--poll-us', '-5'])).toThrow(/--poll-us needs a whole number >= 0/);
    expect(planCr(['--cpus', '1,0']).cpus).toEqual([1, 0]);
    expect(() => planCr(['--cpus', '0'])).toThrow(/--cpus needs two CPU numbers/);
    expect(() => planCr(['--heat-args', '200,-1'])).toThrow(/--heat-args needs N,TOL/);
    expect(() => planCr(['--checkpoints', '0'])).toThrow(/--checkpoints needs an integer >= 1/);
    expect(() => planCr(['--rep', '3'])).toThrow(/unknown option --rep/);
    expect(() => planCr(['8'])).toThrow(/unexpected argument "8"/);
  });

  it('mpirun flags of each configuration', () => {
    expect(mpirunFlags(2, TCP, '/ck')).toEqual(['-np', '2', '--ssi', 'rpi', 'tcp']);
    expect(mpirunFlags(4, CRTCP, '/ck')).toEqual(
      ['-np', '4', '--ssi', 'rpi', 'crtcp', '--ssi', 'cr', 'self'].concat([
        '--ssi',
        'crlam_self_dir',
        '/ck',
      ]),
    );
    expect(mpirunFlags(4, everyN(2), '/ck').slice(-2)).toEqual(['crlam_self_interval', '2']);
  });

  it('the coordination driver line: rank prefix stripped, checked against the plan', () => {
    const line = `[0] CRCOORD ${JSON.stringify({ np: 3, ms: [40, 50], phases: [phase(10), phase(12)] })}`;
    const s = parseCoordOutput(`mpirun: something\n${line}\n[1] other`, 3, 2);
    expect(s.ms).toEqual([40, 50]);
    expect(stripRank('[12] x')).toBe('x');
    expect(() => parseCoordOutput(line, 4, 2)).toThrow(/expected np 4 and 2 checkpoints/);
    expect(() => parseCoordOutput(line, 3, 3)).toThrow(/expected np 3 and 3 checkpoints/);
    expect(() => parseCoordOutput('nothing', 3, 2)).toThrow(/expected one CRCOORD line, got 0/);
    const shortMs = line.replace('"ms":[40,50]', '"ms":[40]');
    expect(() => parseCoordOutput(shortMs, 3, 2)).toThrow(/malformed CRCOORD line/);
    const noPhase = line.replace('"commitMs":3', '"commitMs":null');
    expect(() => parseCoordOutput(noPhase, 3, 2)).toThrow(/with every phase/);
  });

  it('heat output: its time, answer and the checkpoints mpirun took meanwhile', () => {
    const text = [
      '[0] 200x200 plate on 4 ranks (a 2 x 2 grid): 5150 sweeps in 7.25 s, last change 9.99e-5',
      '[0] temperature at row 50, middle column: 12.345',
      'mpirun: checkpoint series 1 (5000 bytes, 42 ms)',
      'mpirun: checkpoint series 2 (5000 bytes, 38 ms)',
      'mpirun: periodic checkpoint not taken: rank 1: busy',
    ].join('\n');
    const h = parseHeatOutput(text);
    expect(h).toEqual({
      seconds: 7.25,
      sweeps: 5150,
      probe: 12.345,
      checkpoints: 2,
      checkpointMs: [42, 38],
      notTaken: ['rank 1: busy'],
    });
    expect(() => parseHeatOutput('mpirun: failed')).toThrow(/heat.ts printed no result/);
  });

  it('tables: coordination with phases and target, heat overheads against the right base', () => {
    const row = coordRow({ np: 4, ms: [60, 70, 80], phases: [phase(10), phase(20), phase(30)] });
    expect(row.phases.prepareMs.median).toBe(20);
    expect(coordTargetMs(4)).toBe(58);
    const t = formatTable(coordColumns(), [row]);
    // coord = prepare 20 + drain+save 40 = 60 > 58: not met
    expect(t).toMatch(
      /^4\s+70\.0\s+60\.0\s+60\.0\s+20\.0\s+40\.0\s+10\.0\s+20\.0\s+3\.0\s+58\s+NO$/m,
    );
    const fast = coordRow({ np: 1, ms: [20], phases: [phase(5)] });
    expect(formatTable(coordColumns(), [fast])).toMatch(/\s52\s+yes$/m);

    const heat = (c: typeof TCP, s: number[]) => ({
      config: c,
      seconds: stat(s),
      wallMs: stat(s.map((x) => 1000 * x + 500)),
      checkpoints: stat(s.map(() => (c.interval ? 3 : 0))),
    });
    const rows = [heat(TCP, [10]), heat(CRTCP, [10.5]), heat(everyN(1), [11.55])];
    const h = formatTable(heatColumns(rows), rows);
    expect(h).toMatch(/^crtcp\+cr self\s+10\.500.*\s5\.0\s+tcp$/m); // against tcp
    expect(h).toMatch(/^ckpt every 1 s\s+11\.550.*3\.0\s+10\.0\s+crtcp\+cr self$/m); // against crtcp
    const spread = [heat(TCP, [10, 12, 14]), heat(CRTCP, [10.2, 13, 30])];
    // median 13 against 12 (+8.3 %); fastest rounds 10.2 against 10 (+2.0 %)
    expect(formatTable(heatColumns(spread), spread)).toMatch(
      /^crtcp\+cr self\s+13\.000\s+10\.200\s+2\.0\s.*\s8\.3\s+tcp$/m,
    );
    const ping = formatTable(pingColumns(), [
      {
        point: { size: 8, iters: 1, latency: true, bandwidth: false },
        tcp: stat([10e3, 20e3, 30e3]),
        crtcp: stat([11e3, 21e3, 90e3]),
        tcpCpu: stat([40e3, 50e3, 60e3]),
        crtcpCpu: stat([50.5e3, 50e3, 51e3]),
      },
    ]);
    expect(ping).toMatch(
      /^8 B\s+20\.0\s+21\.0\s+0\.000\s+0\.000\s+1\.050\s+5\.0\s+10\.0\s+50\.00\s+50\.50\s+1\.0$/m,
    );
    expect(overheadPct(stat([11]), stat([10]))).toBeCloseTo(10);
    expect(overheadPct(undefined, stat([10]))).toBeNull();
  });

  it('linear fit of coordination time against ranks', () => {
    const f = linearFit([1, 2, 3, 4], [52, 54, 56, 58]);
    expect(f.intercept).toBeCloseTo(50);
    expect(f.slope).toBeCloseTo(2);
    expect(linearFit([3], [7])).toEqual({ intercept: 7, slope: 0 });
  });
});
