import { describe, expect, it } from 'vitest';
import {
  COLL_OPS,
  type CollRow,
  driverArgs,
  iterations,
  nodeAddresses,
  ompiFlags,
  oversubscribedBindingOf,
  parseDriverLine,
  parseDriverOutput,
  parseYieldWhenIdle,
  planColl,
  ratioColumns,
  ssiParams,
  timeColumns,
  warmupCalls,
} from '../src/commands/coll';
import { formatTable, stat } from '../src/harness';

const MiB = 1024 * 1024;
const op = (name: string) => COLL_OPS.find((o) => o.name === name)!;

describe('coll benchmark: plan, driver output, tables', () => {
  it('options: defaults, lists in table order, typos refused', () => {
    const p = planColl([]);
    expect(p.reps).toBe(5);
    expect(p.quick).toBe(false);
    expect(p.nps).toEqual([2, 4, 8]);
    expect(p.ops.map((o) => o.name)).toEqual([
      'barrier',
      'bcast',
      'allreduce8',
      'allreduce4m',
      'alltoall',
    ]);
    expect(p.columns).toEqual(['ssi:lam_basic', 'ompi']);
    expect(p.points.get(8)!.map((x) => x.iters)).toEqual([250, 16, 250, 8, 8]);

    const q = planColl(['--np', '8,2,2', '--ops=alltoall,barrier', '--only', 'ompi', '--quick']);
    expect(q.nps).toEqual([2, 8]); // ascending, once each
    expect(q.ops.map((o) => o.name)).toEqual(['barrier', 'alltoall']); // table order
    expect(q.columns).toEqual(['ompi']);
    expect(q.points.get(2)!.map((x) => x.iters)).toEqual([100, 3]);
    expect(q.points.get(2)!.map((x) => x.warmup)).toEqual([400, 2]);

    const t = planColl(['--coll', 'tuned,lam_basic', '--ops', 'all']);
    expect(t.columns).toEqual(['ssi:tuned', 'ssi:lam_basic', 'ompi']);
    expect(t.ops.map((o) => o.name)).toEqual(COLL_OPS.map((o) => o.name));
    expect(planColl(['--coll', 'tuned', '--only', 'ssi']).columns).toEqual(['ssi:tuned']);
    expect(() => planColl(['--coll', 'Tuned!'])).toThrow(/"Tuned!" is not a coll module name/);
    // <module>/nopoll: the module with the progress engine's polling and yields off
    expect(planColl(['--coll', 'lam_basic,lam_basic/nopoll']).columns).toEqual([
      'ssi:lam_basic',
      'ssi:lam_basic/nopoll',
      'ompi',
    ]);
    expect(ssiParams('lam_basic/nopoll')).toEqual({
      rpi: 'tcp',
      coll: 'lam_basic',
      mpi_base_poll_us: 0,
      mpi_base_yield_every: 0,
    });
    expect(ssiParams('lam_basic')).toEqual({ rpi: 'tcp', coll: 'lam_basic' });
    // <module>/noyield: oversubscribed ranks sleep at once instead of polling with yields
    expect(ssiParams('tuned/noyield')).toEqual({
      rpi: 'tcp',
      coll: 'tuned',
      mpi_base_poll_yield: 0,
    });
    expect(oversubscribedBindingOf('tuned/noyield')).toBeUndefined();
    // <module>/unblocked: the module with its oversubscribed ranks unbound (else blocks per CPU)
    expect(planColl(['--coll', 'tuned,tuned/unblocked']).columns).toEqual([
      'ssi:tuned',
      'ssi:tuned/unblocked',
      'ompi',
    ]);
    expect(ssiParams('tuned/unblocked:barrier_algorithm=tree')).toEqual({
      rpi: 'tcp',
      coll: 'tuned',
      coll_tuned_barrier_algorithm: 'tree',
    });
    expect(oversubscribedBindingOf('tuned/unblocked:barrier_algorithm=tree')).toBe(0);
    expect(oversubscribedBindingOf('tuned:barrier_algorithm=tree')).toBeUndefined();
    expect(oversubscribedBindingOf('lam_basic/nopoll')).toBeUndefined();
    // <module>:<param>=<value>: the module with its own parameters set, one column per spec
    expect(planColl(['--coll', 'tuned,tuned:bcast_algorithm=binomial']).columns).toEqual([
      'ssi:tuned',
      'ssi:tuned:bcast_algorithm=binomial',
      'ompi',
    ]);
    expect(ssiParams('tuned/nopoll:bcast_algorithm=chain:bcast_segment_bytes=8192', 'sm')).toEqual({
      rpi: 'sm',
      coll: 'tuned',
      mpi_base_poll_us: 0,
      mpi_base_yield_every: 0,
      coll_tuned_bcast_algorithm: 'chain',
      coll_tuned_bcast_segment_bytes: '8192',
    });
    expect(() => planColl(['--coll', 'tuned:bcast_algorithm'])).toThrow(
      /is not a coll module name/,
    );
    expect(() => planColl(['--coll', 'lam_basic/fast'])).toThrow(/is not a coll module name/);
    expect(() => planColl(['--ops', 'barrier,reduce'])).toThrow(/no operation "reduce"/);
    expect(() => planColl(['--only', 'mpich'])).toThrow(/no column "mpich"/);
    expect(() => planColl(['--np', '2,x'])).toThrow(/bad process count "x"/);
    expect(() => planColl(['--np', '0'])).toThrow(/bad process count/);
    expect(() => planColl(['--np'])).toThrow(/--np needs a comma-separated list/);
    expect(() => planColl(['--reps', '0'])).toThrow(/--reps/);
    expect(() => planColl(['--rep', '3'])).toThrow(/unknown option --rep/);
    expect(() => planColl(['8'])).toThrow(/unexpected argument "8"/);
  });

  it('--nodes: ranks of the ssi columns on loopback node addresses; reduce4m', () => {
    expect(planColl([]).nodes).toBe(1);
    expect(nodeAddresses(1)).toBeUndefined();
    const p = planColl(['--nodes', '2', '--coll', 'smp,lam_basic', '--ops', 'reduce4m,bcast']);
    expect(p.nodes).toBe(2);
    expect(nodeAddresses(p.nodes)).toEqual(['127.0.0.2', '127.0.0.3']);
    expect(p.ops.map((o) => [o.name, o.kind, o.bytes])).toEqual([
      ['bcast', 'bcast', 4 * 1024 * 1024],
      ['reduce4m', 'reduce', 4 * 1024 * 1024],
    ]);
    expect(() => planColl(['--nodes', '0'])).toThrow(/--nodes: a number of nodes from 1 to 200/);
    expect(() => planColl(['--nodes', 'two'])).toThrow(/--nodes/);
    const line = {
      op: 'reduce',
      bytes: 4194304,
      np: 4,
      iters: 16,
      maxNs: [2],
      avgNs: [2],
      minNs: [1],
    };
    expect(parseDriverLine(`COLL ${JSON.stringify(line)}`)).toEqual(line);
  });

  it('iterations: the 2-process count scaled by 2/np (at least 4), --quick a tenth; warm-up', () => {
    expect(iterations(op('barrier'), 2, false)).toBe(1000);
    expect(iterations(op('barrier'), 4, false)).toBe(500);
    expect(iterations(op('barrier'), 1, false)).toBe(1000);
    expect(iterations(op('alltoall'), 64, false)).toBe(4);
    expect(iterations(op('barrier'), 8, true)).toBe(25);
    expect(iterations(op('allreduce4m'), 8, true)).toBe(2);
    // warm-up: thousands of calls for the latency operations (the JIT), a quarter pass else
    expect(warmupCalls(op('barrier'), 250, false)).toBe(4000);
    expect(warmupCalls(op('allreduce8'), 25, true)).toBe(400);
    expect(warmupCalls(op('bcast'), 64, false)).toBe(16);
    expect(warmupCalls(op('alltoall'), 5, false)).toBe(2);
  });

  it('driver arguments: kind, bytes, calls, warm-up calls and (latency ops) warm-up ms per point', () => {
    const p = planColl(['--np', '4']);
    expect(driverArgs(1, p.points.get(4)!)).toEqual([
      '1',
      'barrier:0:500:4000:500',
      `bcast:${4 * MiB}:32:8`,
      'allreduce:8:500:4000:500',
      `allreduce:${4 * MiB}:16:4`,
      `alltoall:${MiB}:16:4`,
    ]);
    // --quick: no time floor
    expect(driverArgs(1, planColl(['--np', '4', '--quick']).points.get(4)!)[1]).toBe(
      'barrier:0:50:400',
    );
  });

  it('parses driver lines: COLL lines only, malformed ones refused', () => {
    // as c/coll.c prints it, and as programs/coll-mpi.mjs prints it
    expect(
      parseDriverLine(
        'COLL {"op":"bcast","bytes":4194304,"np":2,"iters":20,"maxNs":[3351618.6],"avgNs":[3347561.5],"minNs":[3343504.5]}',
      ),
    ).toEqual({
      op: 'bcast',
      bytes: 4194304,
      np: 2,
      iters: 20,
      maxNs: [3351618.6],
      avgNs: [3347561.5],
      minNs: [3343504.5],
    });
    const s = { op: 'barrier', bytes: 0, np: 8, iters: 3, maxNs: [2.5], avgNs: [2], minNs: [1] };
    expect(parseDriverLine(`COLL ${JSON.stringify(s)}\r`)).toEqual(s);
    expect(parseDriverLine('COLLINFO {"yieldWhenIdle":1}')).toBeUndefined();
    expect(parseDriverLine('[vm:123] WARNING: no openib device')).toBeUndefined();
    const bad = (o: Record<string, unknown>) => `COLL ${JSON.stringify({ ...s, ...o })}`;
    expect(() => parseDriverLine('COLL {"op":"barrier",')).toThrow(/malformed/);
    expect(() => parseDriverLine(bad({ op: 'gatherv' }))).toThrow(/malformed/);
    expect(() => parseDriverLine(bad({ np: 0 }))).toThrow(/malformed/);
    expect(() => parseDriverLine(bad({ maxNs: [] }))).toThrow(/malformed/);
    expect(() => parseDriverLine(bad({ avgNs: [null] }))).toThrow(/malformed/);
    expect(() => parseDriverLine(bad({ minNs: [1, 1] }))).toThrow(/malformed/); // lengths differ
  });

  it('checks a whole output against the plan: every point, in order, on np, with its samples', () => {
    const points = planColl(['--np', '2', '--ops', 'barrier,alltoall', '--quick']).points.get(2)!;
    const line = (o: string, bytes: number, iters: number, np = 2, n = 2) =>
      `COLL ${JSON.stringify({ op: o, bytes, np, iters, maxNs: Array(n).fill(9), avgNs: Array(n).fill(8), minNs: Array(n).fill(7) })}`;
    const good = [
      'COLLINFO {"yieldWhenIdle":0}',
      line('barrier', 0, 100),
      'noise',
      line('alltoall', MiB, 3),
    ];
    expect(parseDriverOutput(good.join('\n'), points, 2, 2).map((x) => x.op)).toEqual([
      'barrier',
      'alltoall',
    ]);
    expect(() => parseDriverOutput(line('barrier', 0, 100), points, 2, 2)).toThrow(
      /expected 2 results, got 1/,
    );
    expect(() =>
      parseDriverOutput(
        [line('alltoall', MiB, 3), line('barrier', 0, 100)].join('\n'),
        points,
        2,
        2,
      ),
    ).toThrow(/result 0: expected barrier:0:100 on 2/);
    expect(() =>
      parseDriverOutput(
        [line('barrier', 0, 100, 4), line('alltoall', MiB, 3, 4)].join('\n'),
        points,
        2,
        2,
      ),
    ).toThrow(/got barrier:0:100 on 4/);
    expect(() =>
      parseDriverOutput(
        [line('barrier', 0, 100, 2, 1), line('alltoall', MiB, 3, 2, 1)].join('\n'),
        points,
        2,
        2,
      ),
    ).toThrow(/expected 2 samples/);
  });

  it("reads Open MPI's yield-when-idle line; the flags keep ob1 on the TCP BTL over lo", () => {
    expect(parseYieldWhenIdle('x\nCOLLINFO {"yieldWhenIdle":1}\nCOLL {}')).toBe(true);
    expect(parseYieldWhenIdle('COLLINFO {"yieldWhenIdle":0}')).toBe(false);
    expect(parseYieldWhenIdle('COLLINFO {"yieldWhenIdle":-1}')).toBeUndefined();
    expect(parseYieldWhenIdle('COLLINFO {')).toBeUndefined();
    expect(parseYieldWhenIdle('')).toBeUndefined();
    const flags = ompiFlags(8);
    expect(flags.join(' ')).toBe(
      '--allow-run-as-root --oversubscribe -np 8 --bind-to none --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo',
    );
    expect(flags.join(' ')).not.toMatch(/coll/); // Open MPI's default collectives
    // --bind core: Open MPI's own default binding (no --bind-to), as the ssi ranks get mpirun's
    expect(ompiFlags(2, false, 'core').join(' ')).toBe(
      '--allow-run-as-root --oversubscribe -np 2 --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo',
    );
    expect(ompiFlags(2, true, 'none').join(' ')).toMatch(
      /--bind-to none --mca pml ob1 --mca btl self,vader$/,
    );
    expect(planColl([]).bind).toBe('core');
    expect(planColl(['--bind', 'none']).bind).toBe('none');
    expect(() => planColl(['--bind', 'socket'])).toThrow(/--bind: core or none, got "socket"/);
  });

  it('tables: times in the unit of the table, ssi/ompi per row and per process count', () => {
    const ns = (x: number) => stat([x, 2 * x, x]);
    const rows: CollRow[] = [
      {
        op: op('barrier'),
        np: 2,
        iters: 1,
        warmup: 0,
        times: { 'ssi:lam_basic': ns(100_000), ompi: ns(10_000) },
      },
      { op: op('barrier'), np: 8, iters: 1, warmup: 0, times: { 'ssi:lam_basic': ns(1_000_000) } }, // no Open MPI
      {
        op: op('bcast'),
        np: 2,
        iters: 1,
        warmup: 0,
        times: { 'ssi:lam_basic': ns(3_000_000), ompi: ns(4_000_000) },
      },
    ];
    expect(
      formatTable(timeColumns(['ssi:lam_basic', 'ompi'], 'us'), rows.slice(0, 2)).split('\n'),
    ).toEqual([
      'operation  np  ssi lam_basic  Open MPI  ssi/ompi',
      '---------  --  -------------  --------  --------',
      'barrier     2          100.0      10.0     10.00',
      'barrier     8         1000.0         -         -',
    ]);
    expect(
      formatTable(timeColumns(['ssi:lam_basic', 'ompi'], 'ms'), rows.slice(2)).split('\n'),
    ).toEqual([
      'operation    np  ssi lam_basic  Open MPI  ssi/ompi',
      '-----------  --  -------------  --------  --------',
      'bcast 4 MiB   2           3.00      4.00      0.75',
    ]);
    expect(timeColumns(['ompi'], 'us').map((c) => c.title)).toEqual([
      'operation',
      'np',
      'Open MPI',
    ]);
    const byOp = [op('barrier'), op('bcast')].map((o) => ({
      op: o,
      rows: rows.filter((r) => r.op === o),
    }));
    expect(formatTable(ratioColumns([2, 8]), byOp).split('\n')).toEqual([
      'operation     np 2  np 8', // np 8 has no Open MPI time: '-', left-aligned
      '-----------  -----  ----',
      'barrier      10.00  -',
      'bcast 4 MiB   0.75  -',
    ]);
    // Several modules: one time and one ratio column each, per process count in the summary.
    const two: CollRow = {
      op: op('barrier'),
      np: 2,
      iters: 1,
      warmup: 0,
      times: { 'ssi:tuned': ns(20_000), 'ssi:lam_basic': ns(100_000), ompi: ns(10_000) },
    };
    const cols = ['ssi:tuned', 'ssi:lam_basic', 'ompi'] as const;
    expect(formatTable(timeColumns([...cols], 'us'), [two]).split('\n')[2]).toBe(
      'barrier     2       20.0          100.0      10.0        2.00           10.00',
    );
    expect(ratioColumns([2], cols).map((c) => c.title)).toEqual([
      'operation',
      'np 2 tuned',
      'np 2 lam_basic',
    ]);
  });
});
