/**
 * Small jobs for the tests of launchers and boot modules (mpirun, tm, slurm): `node jobs.js
 * <mode> [arg]`.
 *
 * - `ring`: a message goes around all ranks; rank 0 prints `ring: 0 1 2 ...`, every rank
 *   `rank R of S on node N (processor name)`.
 * - `env NAME`: prints `env NAME=<value> cwd=<dir>`.
 * - `touch PREFIX`: the ring, then every rank writes the file `PREFIX.<rank>`.
 * - `fail`: rank 1 exits with 3; the others wait for a message that never comes.
 * - `abort`: the last rank calls `abort(7, ...)`; the others wait.
 * - `no-finalize`: rank 0 exits 0 without MPI.finalize; the others wait a minute.
 * - `control`: the job control channel: every rank keeps `job.note` messages, asks `job.echo`
 *   with its rank and prints `control R answer <answer as JSON> notes <notes>`.
 * - `wait`: every rank prints `waiting <rank> <pid>` and waits for a message that never comes
 *   (a job the batch system or the user has to kill).
 */
import { writeFileSync } from 'node:fs';
import { Mpi } from '../mpi';

const [mode, arg] = process.argv.slice(2);
const mpi = await Mpi.init();
const w = mpi.COMM_WORLD;

async function ring(): Promise<void> {
  const next = (w.rank + 1) % w.size;
  const prev = (w.rank + w.size - 1) % w.size;
  if (w.rank === 0) {
    await w.send([0], next, 7);
    const trail = (await w.recv(prev, 7)) as number[];
    console.log(`ring: ${trail.join(' ')}`);
  } else {
    const trail = (await w.recv(prev, 7)) as number[];
    await w.send([...trail, w.rank], next, 7);
  }
}

const never = (from: number) => w.recv(from, 99);

switch (mode) {
  case 'ring':
    await ring();
    console.log(
      `rank ${w.rank} of ${w.size} on node ${process.env.SSI_NODE_ID} (${mpi.processorName})`,
    );
    break;
  case 'env':
    console.log(`env ${arg}=${process.env[arg ?? ''] ?? '(unset)'} cwd=${process.cwd()}`);
    break;
  case 'touch':
    await ring();
    writeFileSync(`${arg}.${w.rank}`, `rank ${w.rank}\n`);
    break;
  case 'fail':
    if (w.rank === 1) process.exit(3);
    await never(1);
    break;
  case 'abort':
    if (w.rank === w.size - 1) await mpi.abort(7, 'the answer is not 42');
    await never(w.size - 1);
    break;
  case 'no-finalize':
    // rank 0 leaves early; the others (not talking to it) must be killed by the launcher
    if (w.rank === 0) process.exit(0);
    await new Promise((r) => setTimeout(r, 60_000));
    break;
  case 'control': {
    const notes: unknown[] = [];
    mpi.control.on('job.note', (p) => void notes.push(p));
    // The answer follows every note sent before it: they are all here when it comes.
    const answer = await mpi.control.ask('job.echo', w.rank, 20_000);
    console.log(`control ${w.rank} answer ${JSON.stringify(answer)} notes ${notes.join(',')}`);
    break;
  }
  case 'wait':
    console.log(`waiting ${w.rank} ${process.pid}`);
    await never((w.rank + 1) % w.size);
    break;
  default:
    console.error(`jobs.js: unknown mode ${mode}; see the comment at the top of jobs.ts`);
    process.exit(2);
}
await mpi.finalize();
