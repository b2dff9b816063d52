import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  parseDriverLine,
  parseDriverOutput,
  parsePairedOutput,
} from '../src/commands/pingpong-output';
import {
  chooseCpus,
  driverArgs,
  iterations,
  ompiFlags,
  pairedArgs,
  parseCpuList,
  planPingPong,
} from '../src/commands/pingpong-plan';
import {
  bandwidthColumns,
  checkSmTargets,
  checkTargets,
  latencyColumns,
  type PingPongRow,
  pairedStat,
} from '../src/commands/pingpong-results';
import { benchRoot, killChildren, openMpiVersion, ssiRunner } from '../src/drivers';
import { formatTable, stat } from '../src/harness';

const KiB = 1024;
const MiB = 1024 * 1024;

describe('pingpong benchmark: plan, driver output, tables, targets', () => {
  it('options: defaults, the union of both size lists measured once, --only, typos refused', () => {
    const p = planPingPong([], [0, 1]);
    expect(p.reps).toBe(5);
    expect(p.columns).toEqual([
      'tcp',
      'nopoll',
      'inet',
      'noyield',
      'raw',
      'raw-unix',
      'ompi',
      'paired',
    ]);
    expect([p.blocks, p.blockIters]).toEqual([10, 200]);
    expect(p.latSizes).toEqual([0, 8, 64, KiB]);
    expect(p.pairedSizes).toEqual([0, 8, 64, KiB, 256 * KiB]);
    expect(p.prepost).toBe(false);
    expect(planPingPong(['--prepost']).prepost).toBe(true);
    expect(p.bwSizes).toEqual([
      KiB,
      4 * KiB,
      16 * KiB,
      64 * KiB,
      256 * KiB,
      MiB,
      4 * MiB,
      16 * MiB,
    ]);
    // 1 KiB is in both tables but measured once
    expect(p.points.map((x) => x.size)).toEqual([0, 8, 64, ...p.bwSizes]);
    const k1 = p.points.find((x) => x.size === KiB)!;
    expect([k1.latency, k1.bandwidth]).toEqual([true, true]);
    expect(p.points.find((x) => x.size === 8)!.bandwidth).toBe(false);

    const q = planPingPong(['--only', 'ompi,tcp', '--reps=3', '--quick', '--bw-sizes', '1m']);
    expect(q.columns).toEqual(['tcp', 'ompi']); // table order, not the order given
    expect(q.reps).toBe(3);
    expect(q.points.map((x) => x.iters)).toEqual(q.points.map((x) => iterations(x.size, true)));

    expect(() => planPingPong(['--only', 'tcp,mpich'])).toThrow(/no column "mpich"/);
    // --rpi picks the rpi columns among the defaults; crtcp only when asked for
    expect(planPingPong(['--rpi', 'crtcp,tcp'], [0, 1]).columns).toEqual([
      'tcp',
      'nopoll',
      'inet',
      'noyield',
      'crtcp',
      'raw',
      'raw-unix',
      'ompi',
      'paired',
    ]);
    expect(planPingPong(['--rpi', 'crtcp'], [0, 1]).columns).toEqual([
      'crtcp',
      'raw',
      'ompi',
      'paired',
    ]);
    expect(planPingPong(['--only', 'crtcp,tcp'], [0, 1]).columns).toEqual(['tcp', 'crtcp']);
    expect(() => planPingPong(['--rpi', 'gm'])).toThrow(/--rpi: no rpi "gm"/);
    expect(() => planPingPong(['--rep', '3'])).toThrow(/unknown option --rep/);
    expect(() => planPingPong(['--reps', '0'])).toThrow(/--reps/);
    expect(() => planPingPong(['--lat-sizes', '8,x'])).toThrow(/bad size/);
    expect(() => planPingPong(['--blocks', '0'])).toThrow(/--blocks/);
    expect(() => planPingPong(['--block-iters', '0'])).toThrow(/--block-iters/);
  });

  it('paired mode: arguments, output checked against the plan, ratios taken pair by pair', () => {
    const plan = planPingPong(['--paired-sizes', '0,8', '--blocks', '2', '--block-iters', '50']);
    expect(() => planPingPong(['--paired-sizes', '0,100'])).toThrow(
      /--paired-sizes: 100 is not one of the latency or bandwidth sizes/,
    );
    expect(planPingPong(['--lat-sizes', '8', '--bw-sizes', '1m']).pairedSizes).toEqual([8]);
    expect(pairedArgs(plan)).toEqual(['paired', '2', '50', '0', '8']);
    const line = (size: number, rpiNs: number[], rawNs = [1000, 1000], blockIters = 50) =>
      `PAIRED ${JSON.stringify({ size, blockIters, rpiNs, rawNs })}`;
    const good = ['[1] noise', line(0, [1100, 900]), line(8, [1200, 1300])].join('\n');
    expect(parsePairedOutput(good, plan).map((x) => x.rpiNs)).toEqual([
      [1100, 900],
      [1200, 1300],
    ]);
    expect(() => parsePairedOutput(line(0, [1100, 900]), plan)).toThrow(
      /expected sizes 0,8, got "0"/,
    );
    expect(() => parsePairedOutput(line(0, [1100]), plan)).toThrow(/expected 2 blocks each/);
    expect(() => parsePairedOutput(line(0, [1100, 0]), plan)).toThrow(/malformed/);
    expect(() => parsePairedOutput(line(0, [1, 2], [1, 2], 49), plan)).toThrow(/malformed/);
    expect(() => parsePairedOutput('PAIRED {"size":', plan)).toThrow(
      /malformed driver line: PAIRED/,
    );

    // each rpi block is divided by the raw block measured next to it, not by the raw median
    const st = pairedStat([200, 110, 120], [100, 100, 200]);
    expect(st.ratio.samples).toEqual([2, 1.1, 0.6]);
    expect(st.ratio.median).toBe(1.1);
    expect(st.rpi.median).toBe(120);
    expect(st.raw.median).toBe(100);
  });

  it('iterations: many round trips for small messages, a byte budget for large, at least 8', () => {
    expect(iterations(0, false)).toBe(2000);
    expect(iterations(KiB, false)).toBe(2000);
    expect(iterations(64 * KiB, false)).toBe(2000);
    expect(iterations(256 * KiB, false)).toBe(512);
    expect(iterations(16 * MiB, false)).toBe(8);
    expect(iterations(1024 * MiB, false)).toBe(8);
    expect(iterations(16 * MiB, true)).toBe(2);
    expect(iterations(0, true)).toBe(200);
    expect(driverArgs(1, planPingPong(['--lat-sizes', '0', '--bw-sizes', '1m']).points)).toEqual([
      '1',
      '0:2000',
      '1048576:128',
    ]);
  });

  it('parses driver lines: PINGPONG lines only, malformed ones refused', () => {
    // a line as c/pingpong.c prints it, and one as the .mjs drivers print it
    expect(
      parseDriverLine('PINGPONG {"size":8,"iters":4000,"oneWayNs":[11099.3,13067.8]}'),
    ).toEqual({ size: 8, iters: 4000, oneWayNs: [11099.3, 13067.8] });
    expect(
      parseDriverLine(`PINGPONG ${JSON.stringify({ size: 0, iters: 2, oneWayNs: [1.5] })}\r`),
    ).toEqual({ size: 0, iters: 2, oneWayNs: [1.5] });
    expect(parseDriverLine('[vm:123] WARNING: no openib device')).toBeUndefined();
    expect(parseDriverLine('')).toBeUndefined();
    expect(
      parseDriverLine('PINGPONG {"size":8,"iters":9,"oneWayNs":[3000,4000],"cpuNs":[5200,0]}'),
    ).toEqual({ size: 8, iters: 9, oneWayNs: [3000, 4000], cpuNs: [5200, 0] });
    for (const cpuNs of ['[5200]', '[-1,2]', '[1,null]', '"5200"'])
      expect(() =>
        parseDriverLine(`PINGPONG {"size":8,"iters":9,"oneWayNs":[3000,4000],"cpuNs":${cpuNs}}`),
      ).toThrow(/malformed/);
    expect(() => parseDriverLine('PINGPONG {"size":8,')).toThrow(/malformed/);
    expect(() => parseDriverLine('PINGPONG {"size":8,"iters":1,"oneWayNs":[]}')).toThrow(
      /malformed/,
    );
    expect(() => parseDriverLine('PINGPONG {"size":-1,"iters":1,"oneWayNs":[3]}')).toThrow(
      /malformed/,
    );
    expect(() => parseDriverLine('PINGPONG {"size":8,"iters":1,"oneWayNs":[null]}')).toThrow(
      /malformed/,
    );
  });

  it('checks a whole output against the plan: every point, in order, with its samples', () => {
    const points = planPingPong(['--lat-sizes', '8', '--bw-sizes', '1m', '--quick']).points;
    const line = (size: number, iters: number, n = 2) =>
      `PINGPONG ${JSON.stringify({ size, iters, oneWayNs: new Array(n).fill(1000) })}`;
    const good = ['mpirun: noise', line(8, 200), line(MiB, 13), ''].join('\n');
    expect(parseDriverOutput(good, points, 2).map((s) => s.size)).toEqual([8, MiB]);
    expect(() => parseDriverOutput(line(8, 200), points, 2)).toThrow(/expected 2 results, got 1/);
    expect(() => parseDriverOutput([line(MiB, 13), line(8, 200)].join('\n'), points, 2)).toThrow(
      /expected 8:200/,
    );
    expect(() => parseDriverOutput([line(8, 200, 1), line(MiB, 13)].join('\n'), points, 2)).toThrow(
      /expected 2 samples/,
    );
  });

  it('recognises Open MPI by mpirun --version; the flags keep ob1 on the TCP BTL over lo', () => {
    expect(openMpiVersion('mpirun (Open MPI) 4.1.4\n\nReport bugs to ...')).toBe('4.1.4');
    expect(openMpiVersion('HYDRA build details:\n    Version: 4.0.2')).toBeUndefined();
    const flags = ompiFlags([0, 1]);
    const arg = (name: string) => flags[flags.indexOf(name) + 1];
    expect(flags.join(' ')).toContain(
      '--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo',
    );
    expect(arg('-np')).toBe('2');
    expect(arg('--bind-to')).toBe('none'); // the ranks pin themselves
    expect(arg('-x')).toBe('SSI_BENCH_CPUS');
    expect(flags).not.toContain('mpi_yield_when_idle');
    expect(ompiFlags([1, 1]).join(' ')).toContain('--mca mpi_yield_when_idle 1');
    expect(ompiFlags(null)).not.toContain('-x');
    expect(ompiFlags(null, true).join(' ')).toContain('-x SSI_BENCH_PREPOST');
  });

  it('--rpi sm: the sm columns by wait mode, Open MPI over vader, the sm targets', () => {
    const p = planPingPong(['--rpi', 'sm'], [0, 1]);
    expect(p.rpi).toBe('sm');
    expect(p.columns).toEqual(['smspin', 'smblock', 'sm', 'tcp', 'ompi']);
    expect(planPingPong([], [0, 1]).columns).toEqual([
      'tcp',
      'nopoll',
      'inet',
      'noyield',
      'raw',
      'raw-unix',
      'ompi',
      'paired',
    ]);
    expect(() => planPingPong(['--rpi', 'usysv'], [0, 1])).toThrow(
      '--rpi: no rpi "usysv" (choose from tcp,crtcp,sm)',
    );
    const vader = ompiFlags([0, 1], false, true).join(' ');
    expect(vader).toContain('--mca pml ob1 --mca btl self,vader');
    expect(vader).not.toContain('tcp');
    const s = (ns: number) => stat([ns, ns, ns]);
    const rows: PingPongRow[] = [
      {
        size: 8,
        iters: 1,
        latency: true,
        bandwidth: false,
        smspin: s(700),
        smblock: s(30_000),
        sm: s(1200),
        tcp: s(45_000),
      },
      { size: MiB, iters: 1, latency: false, bandwidth: true, smspin: s(MiB / 12) },
    ];
    expect(checkSmTargets(rows).map((t) => [t.target, t.measured, t.met])).toEqual([
      ['spin one-way at 8 B <= 1 us', '0.70 us', true],
      ['spin bandwidth at 1 MiB >= 10 GB/s', '12.00 GB/s', true],
      ['block one-way at 8 B <= 0.8 x tcp', '0.67 x tcp', true],
      ['hybrid one-way at 8 B <= 2 x spin', '1.71 x spin', true],
    ]);
    rows[0]!.smblock = s(40_000);
    expect(checkSmTargets(rows)[2]!.met).toBe(false);
  });

  it('placement: CPU lists, the default pair, --cpus checked against the allowed CPUs', () => {
    expect(parseCpuList('0-3,6\n')).toEqual([0, 1, 2, 3, 6]);
    expect(parseCpuList('1')).toEqual([1]);
    expect(() => parseCpuList('0-')).toThrow(/bad CPU list/);
    expect(chooseCpus(undefined, [0, 1])).toEqual([0, 1]);
    expect(chooseCpus(undefined, [2, 5, 7])).toEqual([2, 5]);
    expect(chooseCpus(undefined, [3])).toBeNull(); // one CPU: nothing to choose
    expect(chooseCpus(undefined, undefined)).toEqual([0, 1]);
    expect(chooseCpus('none', [0, 1])).toBeNull();
    expect(chooseCpus('1,1', [0, 1])).toEqual([1, 1]);
    expect(() => chooseCpus('0,2', [0, 1])).toThrow(/CPU 2 is not one/);
    expect(() => chooseCpus('0', [0, 1])).toThrow(/two CPU numbers/);
    expect(() => chooseCpus('a,b', [0, 1])).toThrow(/two CPU numbers/);
    expect(planPingPong(['--cpus', '1,0'], [0, 1]).cpus).toEqual([1, 0]);
    expect(planPingPong([], [0, 1]).cpus).toEqual([0, 1]);
  });

  it('warm-up: 2 s of 8-byte round trips by default, 0.2 s with --quick, checked', () => {
    expect(planPingPong([], [0, 1]).warmupMs).toBe(2000);
    expect(planPingPong(['--quick'], [0, 1]).warmupMs).toBe(200);
    expect(planPingPong(['--warmup-ms', '0'], [0, 1]).warmupMs).toBe(0);
    expect(() => planPingPong(['--warmup-ms', '-5'], [0, 1])).toThrow(/--warmup-ms needs/);
    expect(() => planPingPong(['--warmup-ms', 'soon'], [0, 1])).toThrow(/--warmup-ms needs/);
  });

  it('tables: ratios against the raw socket, bandwidth as a percentage; targets', () => {
    const ns = (x: number) => stat([x, x, x]);
    const rows: PingPongRow[] = [
      { size: 8, iters: 1, latency: true, bandwidth: false, tcp: ns(12_000), raw: ns(10_000) },
      {
        size: 256 * KiB,
        iters: 1,
        latency: false,
        bandwidth: true,
        tcp: ns(200_000),
        raw: ns(180_000),
      },
      { size: MiB, iters: 1, latency: false, bandwidth: true, tcp: ns(1_000_000) }, // no raw
    ];
    expect(formatTable(latencyColumns(['tcp', 'raw']), rows.slice(0, 1)).split('\n')).toEqual([
      'size  tcp rpi  raw socket  tcp/raw',
      '----  -------  ----------  -------',
      '8 B     12.00       10.00     1.20',
    ]);
    expect(formatTable(bandwidthColumns(['tcp', 'raw']), rows.slice(1)).split('\n')).toEqual([
      'size     tcp rpi  raw socket  tcp/raw %',
      '-------  -------  ----------  ---------',
      '256 KiB    1.311       1.456       90.0',
      '1 MiB      1.049           -          -',
    ]);
    expect(latencyColumns(['tcp', 'ompi']).map((c) => c.title)).toEqual([
      'size',
      'tcp rpi',
      'Open MPI',
      'tcp/ompi',
    ]);
    // the nopoll column (polling off: the tcp rpi before issue 18) and its ratio
    expect(latencyColumns(['tcp', 'nopoll']).map((c) => c.title)).toEqual([
      'size',
      'tcp rpi',
      'tcp nopoll',
      'tcp/nopoll',
    ]);
    expect(checkTargets(rows)).toEqual([
      { target: 'latency at 8 B <= 1.2 x raw', measured: '1.20 x raw socket', met: true },
      {
        target: 'bandwidth at 256 KiB >= 90% of raw',
        measured: '90.0 % of raw socket',
        met: true,
      },
    ]);
    rows[0]!.tcp = ns(12_100);
    expect(checkTargets(rows)[0]!.met).toBe(false);

    // checked against the best raw loop of the row: here the raw unix column
    rows[0]!.tcp = ns(11_000);
    rows[0]!['raw-unix'] = ns(9_000);
    expect(checkTargets(rows)[0]).toEqual({
      target: 'latency at 8 B <= 1.2 x raw',
      measured: '1.22 x raw unix',
      met: false,
    });
    rows[1]!['raw-unix'] = ns(170_000);
    expect(checkTargets(rows)[1]).toEqual({
      target: 'bandwidth at 256 KiB >= 90% of raw',
      measured: '85.0 % of raw unix',
      met: false,
    });
    expect(bandwidthColumns(['tcp', 'raw-unix']).map((c) => c.title)).toEqual([
      'size',
      'tcp rpi',
      'raw unix',
      'tcp/unix %',
    ]);
    rows[0]!['raw-unix'] = undefined;
    rows[1]!['raw-unix'] = undefined;

    // and on the paired column's pair-by-pair ratio, when that raw loop is the best
    rows[0]!.paired = pairedStat([11_500, 12_000, 10_000], [10_000, 10_000, 10_000]);
    expect(checkTargets(rows)[0]).toEqual({
      target: 'latency at 8 B <= 1.2 x raw',
      measured: '1.15 x paired raw',
      met: true,
    });
    rows[0]!.paired = pairedStat([13_000, 12_500, 10_000], [10_000, 10_000, 10_000]);
    expect(checkTargets(rows)[0]!.met).toBe(false);
    expect(latencyColumns(['tcp', 'raw', 'paired']).map((c) => c.title)).toEqual([
      'size',
      'tcp rpi',
      'raw socket',
      'tcp/raw',
      'paired tcp',
      'paired raw',
      'paired tcp/raw',
    ]);
    expect(bandwidthColumns(['tcp', 'paired']).map((c) => c.title)).toEqual([
      'size',
      'tcp rpi',
      'paired tcp',
      'paired raw',
      'paired tcp/raw %',
    ]);
    // and bandwidth too: 100 / the median of (rpi block / raw block)
    rows[1]!.paired = pairedStat([250_000, 200_000, 220_000], [200_000, 200_000, 200_000]);
    expect(checkTargets(rows)[1]).toEqual({
      target: 'bandwidth at 256 KiB >= 90% of raw',
      measured: '90.0 % of raw socket',
      met: true,
    });
    rows[1]!.paired = pairedStat([250_000, 230_000, 220_000], [200_000, 200_000, 200_000]);
    expect(checkTargets(rows)[1]).toEqual({
      target: 'bandwidth at 256 KiB >= 90% of raw',
      measured: '87.0 % of paired raw',
      met: false,
    });
  });
});

describe('pingpong benchmark: the raw socket driver', () => {
  const program = fileURLToPath(new URL('../programs/pingpong-raw.mjs', import.meta.url));
  const started: ChildProcess[] = [];
  const dirs: string[] = [];
  afterEach(() => {
    for (const c of started) if (c.exitCode === null) c.kill('SIGKILL');
    started.length = 0;
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  const run = (args: string[], env: Record<string, string> = {}) => {
    const c = spawn(process.execPath, [program, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    started.push(c);
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => {
      out += d;
    });
    c.stderr.on('data', (d) => {
      err += d;
    });
    const exit = new Promise<number | null>((r) => c.on('close', r));
    return { c, out: () => out, err: () => err, exit };
  };

  // raw socket over TCP, raw unix over a Unix-domain socket (its own temporary directory); each
  // with the event loop sleeping between messages and with SSI_BENCH_RAW_POLL=1 (polling)
  it.each([
    ['tcp', false],
    ['unix', false],
    ['tcp', true],
    ['unix', true],
  ])(
    'frames envelope + body both ways (copied and direct reads) over %s (polling: %s) and prints what the parser reads',
    async (family, poll) => {
      // 0 B: envelope only; 40000 B: the part after the first read goes straight into the buffer
      const points = planPingPong(['--lat-sizes', '0,8', '--bw-sizes', '40000,300000']).points.map(
        (p) => ({ ...p, iters: 3 }),
      );
      const env: Record<string, string> = poll ? { SSI_BENCH_RAW_POLL: '1' } : {};
      const dir = family === 'unix' ? mkdtempSync(join(tmpdir(), 'ssi-raw-unix-test-')) : null;
      dirs.push(...(dir ? [dir] : []));
      const path = dir ? join(dir, 'echo.sock') : null;
      const echo = run(['echo', '300000', ...(path ? [path] : [])], env);
      const where = await new Promise<string>((resolve, reject) => {
        const t = setTimeout(
          () => reject(new Error(`no PORT line from the echo side in 15 s: ${echo.err()}`)),
          15_000,
        );
        echo.c.stdout.on('data', () => {
          const m = /PORT (\S+)/.exec(echo.out());
          if (m) {
            clearTimeout(t);
            resolve(m[1]!);
          }
        });
        echo.c.on('close', () => reject(new Error(`echo side exited: ${echo.err()}`)));
      });
      if (path) {
        expect(where).toBe(path);
        expect(statSync(path).isSocket()).toBe(true); // really a Unix-domain socket
      } else expect(where).toMatch(/^\d+$/);
      const ping = run(['ping', where, ...driverArgs(2, points)], env);
      expect(await ping.exit, ping.err()).toBe(0);
      const samples = parseDriverOutput(ping.out(), points, 2);
      expect(samples.map((s) => s.size)).toEqual([0, 8, 40000, 300000]);
      expect(await echo.exit).toBe(0); // the echo side ends when the connection closes
      // SSI_BENCH_RAW_POLL=1: its event loop ran immediates all along (polled); else none
      const polled = Number(/POLLED (\d+)/.exec(echo.out())?.[1]);
      if (poll) expect(polled).toBeGreaterThan(100);
      else expect(polled).toBe(0);
    },
    30_000,
  );
});

describe('pingpong benchmark: the paired mode of the MPI driver', () => {
  afterEach(() => killChildren());

  it.each([
    ['send then receive', {}],
    ['receives posted first', { SSI_BENCH_PREPOST: '1' }],
  ])(
    'runs 2 ranks that alternate rpi and raw socket blocks (%s), echoes checked, sizes up to rendezvous',
    async (_how, env) => {
      // 100000 B: rendezvous on the rpi, a direct read into the body on the raw socket
      const plan = planPingPong([
        '--lat-sizes',
        '0,8,100000',
        '--paired-sizes',
        '0,8,100000',
        '--blocks',
        '3',
        '--block-iters',
        '5',
        '--only',
        'paired',
      ]);
      const { run } = await ssiRunner(benchRoot(), 'pingpong-mpi.mjs', { rpi: 'tcp' }, env);
      const got = parsePairedOutput(await run(2, pairedArgs(plan), 60_000), plan);
      expect(got.map((x) => [x.size, x.rpiNs.length, x.rawNs.length])).toEqual([
        [0, 3, 3],
        [8, 3, 3],
        [100000, 3, 3],
      ]);
    },
    90_000,
  );
});

describe('pingpong benchmark: the timed passes of the MPI driver', () => {
  afterEach(() => killChildren());

  it('reports, per repetition, the one-way time and both ranks CPU time per round trip', async () => {
    const points = [
      { size: 0, iters: 50, latency: true, bandwidth: false },
      { size: 100000, iters: 5, latency: false, bandwidth: true },
    ];
    const { run } = await ssiRunner(benchRoot(), 'pingpong-mpi.mjs', { rpi: 'tcp' }, {});
    const got = parseDriverOutput(await run(2, driverArgs(2, points), 60_000), points, 2);
    for (const s of got) {
      expect(s.cpuNs).toHaveLength(2);
      // Each round trip costs both ranks at least a send and a receive of CPU time.
      for (const ns of s.cpuNs!) expect(ns).toBeGreaterThan(0);
    }
  }, 90_000);
});
