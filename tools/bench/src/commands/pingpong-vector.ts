import {
  benchRoot,
  type MpiRunner,
  ompiRunner,
  sourceState,
  ssiRunner,
  withDriverWorkDir,
} from '../drivers';
import {
  type BenchCommand,
  type Column,
  formatTable,
  Options,
  positiveNumbers,
  prefixedJson,
  resultLines,
  stat,
  writeResults,
} from '../harness';
import { ompiFlags } from './pingpong-plan';

const USAGE = `usage: node tools/bench/dist/cli.js pingpong-vector [options]

A matrix column (n doubles, every --stride-th element of an n x stride row-major matrix)
ping-pongs between 2 processes of this machine, over the tcp rpi, in five columns measured in the
same run (rounds interleaved, each round fresh processes of every column in a rotated order);
with --block B the column is n/B blocks of B contiguous doubles, one per row:
  contig   n contiguous doubles (no column): the floor of the others
  vector   [matrix, Datatype.vector(n/B, B, stride, FLOAT64), 1] on both sides, packed by the
           MPI layer (rpi_tcp_gather 0), received scattered into the column as the bytes arrive
           (tcp's default)
  staged   the same, every receive staged whole and unpacked afterwards (rpi_tcp_scatter 0: the
           receive path before scattering)
  gather   the same, every send gathered by tcp from the matrix (one writev; thresholds at
           their minimum: rpi_tcp_gather_min 0, rpi_tcp_gather_range 1)
  hand     the column packed by a JavaScript loop into a Float64Array, and unpacked by one
  ompi     Open MPI's MPI_Type_vector (c/pingpong-vector.c, mpicc -O2, TCP BTL on loopback)
One-way time = round trip / 2, medians over --reps rounds; vector/hand < 1: the datatype is
faster than packing by hand.

options:
  --reps N       rounds (default 5)
  --n LIST       column lengths in doubles (default 1k,4k,16k,64k,256k,1m)
  --stride N     doubles per matrix row (default 8)
  --block B      contiguous doubles per row in the column (default 1; at most --stride)
  --cpus A,B     pin rank 0 to CPU A and rank 1 to CPU B (default none: the scheduler places)
  --only LIST    columns to run: contig,vector,staged,gather,hand,ompi (default all)
  --quick        a tenth of the iterations`;

const COLUMNS = ['contig', 'vector', 'staged', 'gather', 'hand', 'ompi'] as const;
/** The tcp parameters of each @ssi/mpi column (and the program's mode). */
const SSI_COLUMNS: Record<string, { mode: string; ssi: Record<string, number> }> = {
  contig: { mode: 'contig', ssi: {} },
  vector: { mode: 'vector', ssi: { rpi_tcp_gather: 0 } },
  staged: { mode: 'vector', ssi: { rpi_tcp_gather: 0, rpi_tcp_scatter: 0 } },
  gather: { mode: 'vector', ssi: { rpi_tcp_gather_min: 0, rpi_tcp_gather_range: 1 } },
  hand: { mode: 'hand', ssi: {} },
};
type VColumn = (typeof COLUMNS)[number];

/** Round trips per timed pass: about 64 MiB each way, 4 to 1000. */
function iterations(n: number, quick: boolean): number {
  const full = Math.max(4, Math.min(1000, Math.floor((64 * 1024 * 1024) / (8 * n))));
  return quick ? Math.max(2, Math.ceil(full / 10)) : full;
}

function parse(output: string, points: { n: number; iters: number }[]): number[] {
  const lines = resultLines(
    output,
    (line) => prefixedJson(line, 'PINGPONG '),
    points.length,
    (r, i) =>
      r.size !== points[i]!.n * 8 || !positiveNumbers(r.oneWayNs)
        ? `bad result line for n ${points[i]!.n}`
        : undefined,
  );
  return lines.map((r) => (r.oneWayNs as number[])[0]!);
}

export const pingpongVectorCommand: BenchCommand = {
  name: 'pingpong-vector',
  summary: 'a matrix column: derived vector datatype vs packing by hand vs Open MPI',
  usage: USAGE,
  async run(args) {
    const o = new Options(args);
    const bad = o.unknown(['reps', 'n', 'stride', 'block', 'cpus', 'only', 'quick']);
    if (bad.length) throw new Error(`unknown option(s) --${bad.join(', --')}\n${USAGE}`);
    const reps = o.number('reps', 5);
    const stride = o.number('stride', 8);
    const block = o.number('block', 1);
    if (!(Number.isInteger(block) && block >= 1 && block <= stride)) {
      throw new Error(`--block ${block}: an integer from 1 to --stride (${stride})`);
    }
    const quick = o.has('quick');
    const points = o
      .sizes('n', [1024, 4096, 16384, 65536, 262144, 1048576])
      .map((n) => ({ n, iters: iterations(n, quick) }));
    const only = o.string('only', COLUMNS.join(',')).split(',') as VColumn[];
    const cpusArg = o.string('cpus', 'none');
    const cpus = cpusArg === 'none' ? null : cpusArg.split(',').map(Number);
    const env: Record<string, string> = cpus ? { SSI_BENCH_CPUS: cpus.join(',') } : {};
    const root = benchRoot();
    const badN = points.find((p) => p.n % block !== 0);
    if (badN) throw new Error(`--n ${badN.n} is not a multiple of --block ${block}`);
    const pointArgs = points.map((p) => `${p.n}:${p.iters}`);
    return withDriverWorkDir(
      'ssi-bench-pingpong-vector-',
      'the ping-pong processes',
      async (dir) => {
        const runners: Partial<Record<VColumn, () => Promise<string>>> = {};
        const info: Record<string, unknown> = {};
        const ssi = async (c: string) => {
          const { mode, ssi: params } = SSI_COLUMNS[c]!;
          const t = await ssiRunner(
            root,
            'pingpong-vector-mpi.mjs',
            { rpi: 'tcp', ...params },
            env,
          );
          info[c] = t.info;
          return () => t.run(2, [mode, '1', String(stride), String(block), ...pointArgs], 600_000);
        };
        for (const c of only) {
          if (c === 'ompi') {
            process.stderr.write('compiling c/pingpong-vector.c with mpicc ...\n');
            const r = ompiRunner(root, 'pingpong-vector', dir, () => ompiFlags(cpus), {
              ...process.env,
              ...env,
            });
            if ('skip' in r) process.stderr.write(`Open MPI column skipped: ${r.skip}\n`);
            else {
              const run: MpiRunner = r.run;
              runners.ompi = () =>
                run(2, ['1', String(stride), String(block), ...pointArgs], 600_000);
              info.ompi = r.info;
            }
          } else if (COLUMNS.includes(c)) runners[c] = await ssi(c);
          else throw new Error(`--only: unknown column "${c}" (known: ${COLUMNS.join(', ')})`);
        }
        const columns = COLUMNS.filter((c) => runners[c]);
        const samples = Object.fromEntries(
          columns.map((c) => [c, points.map(() => [] as number[])]),
        );
        for (let round = 0; round < reps; round++) {
          const order = columns.map((_, i) => columns[(i + round) % columns.length]!);
          for (const c of order) {
            process.stderr.write(`round ${round + 1}/${reps}: ${c}\n`);
            parse(await runners[c]!(), points).forEach((ns, i) => {
              samples[c]![i]!.push(ns);
            });
          }
        }
        const med = (c: VColumn, i: number) =>
          samples[c] ? stat(samples[c]![i]!).median / 1000 : Number.NaN;
        const us = (x: number) => (Number.isNaN(x) ? '-' : x.toFixed(1));
        const ratio = (a: number, b: number) => (Number.isNaN(a / b) ? '-' : (a / b).toFixed(2));
        const rows = points.map((p, i) => ({ ...p, i }));
        type Row = (typeof rows)[number];
        const table: Column<Row>[] = [
          { title: 'n doubles', value: (r) => String(r.n) },
          { title: 'bytes', value: (r) => String(r.n * 8) },
          ...columns.map((c) => ({ title: `${c} us`, value: (r: Row) => us(med(c, r.i)) })),
          { title: 'vector/hand', value: (r) => ratio(med('vector', r.i), med('hand', r.i)) },
          { title: 'vector/contig', value: (r) => ratio(med('vector', r.i), med('contig', r.i)) },
          { title: 'vector/ompi', value: (r) => ratio(med('vector', r.i), med('ompi', r.i)) },
          { title: 'vector/staged', value: (r) => ratio(med('vector', r.i), med('staged', r.i)) },
          { title: 'gather/hand', value: (r) => ratio(med('gather', r.i), med('hand', r.i)) },
          { title: 'gather/vector', value: (r) => ratio(med('gather', r.i), med('vector', r.i)) },
          { title: 'gather/ompi', value: (r) => ratio(med('gather', r.i), med('ompi', r.i)) },
        ];
        console.log(
          `matrix column ping-pong, stride ${stride} doubles, blocks of ${block}, one-way microseconds`,
        );
        console.log(formatTable(table, rows));
        const file = writeResults('pingpong-vector', {
          params: { reps, stride, block, points, cpus, quick },
          info,
          source: sourceState(root, ['packages/mpi', 'plugins/rpi-tcp']),
          samples,
        });
        process.stderr.write(`results: ${file}\n`);
        return 0;
      },
    );
  },
};
