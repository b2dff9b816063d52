/**
 * The restore runner: what a restart of an `external` series starts for each rank (the crlam
 * half's `restartArgv`), on the rank's node in the new job — LAM's application schema of
 * `cr_restart` commands (seed `003_…`). It runs the back end's restart command and stands for
 * the restored process in the new job: mpirun sees its output and its exit status as the rank's.
 *
 *     node restore-runner.js <series dir> <rank>
 *
 * 1. Reads the rank's record in the series; a missing image is an error naming it.
 * 2. Publishes the new job's contact in the rank's directory of the series (a restored process
 *    keeps its old environment; it finds the contact by a path it knows) and opens the FIFOs
 *    the restored process's output comes through.
 * 3. Runs the restart command (placeholders `{image} {rank} {node} {host} {series} {job} {pid}`;
 *    `{node}` and `{host}` are the new ones) and waits, bounded by crmpi_external_restore_timeout,
 *    for the restored process to join the job; a command that fails first is an error with its
 *    status.
 * 4. Forwards the restored process's output until it exits, and exits with its exit code. On
 *    every way out it kills the restart command's process group.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import { hostname, constants as osConstants } from 'node:os';
import { dirname } from 'node:path';
import { CheckpointStore, JOB_ENV, jobContactOf } from '@ssi/mpi';
import { fillCommand, type ProcessPlace, placeEnv } from './placeholders';
import { decodeRecord, EXTERNAL_SECTION, type ExternalRecord } from './record';
import { clearRestoreFiles, type RestoreFiles, restoreFiles, writeJson } from './restore-files';

const POLL_MS = 50;
/** Default of crmpi_external_restore_timeout (the parameter reaches the runner as LAM_MPI_SSI_*). */
const DEFAULT_TIMEOUT_S = 60;

class RestoreError extends Error {}

async function main(argv: string[]): Promise<number> {
  const [seriesDir, rankArg] = argv;
  const rank = Number(rankArg);
  if (!seriesDir || !Number.isInteger(rank) || rank < 0) {
    throw new RestoreError('usage: restore-runner <series dir> <rank>');
  }
  const record = await readRecord(seriesDir, rank);
  const home = dirname(record.place.image);
  if (!existsSync(record.place.image)) {
    throw new RestoreError(
      `rank ${rank}: the image ${record.place.image} is missing: this process cannot be restored`,
    );
  }
  const command = restartCommand(record, rank);
  const files = restoreFiles(home);
  await clearRestoreFiles(files);
  const output = openOutput(files);
  await writeJson(files.contact, { ...jobContactOf(process.env), runner: process.pid });
  const place = placeNow(record);
  // Its own process group, so that everything it starts can be ended with it; its output is
  // forwarded, so nothing it leaves behind holds this runner's (the lamd waits for its end).
  const child = spawn('sh', ['-c', command], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...placeEnv(place) },
    detached: true,
  });
  child.stdout!.pipe(process.stdout, { end: false });
  child.stderr!.pipe(process.stderr, { end: false });
  const stop = () => killGroup(child);
  process.on('exit', stop);
  process.on('SIGTERM', () => endAll(files, 143));
  return await watch(rank, command, child, files, output);
}

/** Ends the restart command and whatever it started (its process group). */
function killGroup(child: ChildProcess): void {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

async function readRecord(seriesDir: string, rank: number): Promise<ExternalRecord> {
  const series = Number(/series-(\d+)$/.exec(seriesDir)?.[1]);
  const store = await CheckpointStore.open(dirname(seriesDir), { create: false });
  const file = await store.readRankFile(series, rank);
  const bytes = file.sections.get(EXTERNAL_SECTION);
  if (!bytes) throw new RestoreError(`rank ${rank}'s file of ${seriesDir} has no external record`);
  return decodeRecord(bytes, `rank ${rank}'s file of ${seriesDir}`);
}

/** The restart command: crmpi_external_restart_cmd given to the restart, else the recorded one. */
function restartCommand(record: ExternalRecord, rank: number): string {
  const given = process.env.LAM_MPI_SSI_crmpi_external_restart_cmd?.trim();
  const template = record.backend === 'generic' && given ? given : record.restartTemplate;
  if (!template) {
    throw new RestoreError(
      `rank ${rank}: no restart command: the series was taken without crmpi_external_restart_cmd ` +
        `(give one: lamrestart <dir> --ssi crmpi_external_restart_cmd '<command with {image} …>')`,
    );
  }
  return fillCommand(template, placeNow(record), 'crmpi_external_restart_cmd');
}

/** The image's place, with the node and host it is restored on. */
function placeNow(record: ExternalRecord): ProcessPlace {
  return {
    ...record.place,
    node: `n${process.env[JOB_ENV.NODE_ID] ?? '?'}`,
    host: hostname(),
  };
}

/** The FIFOs, held open read-write so a reader is there before the process opens them. */
function openOutput(files: RestoreFiles): { fd: number; to: NodeJS.WriteStream }[] {
  const made = spawnSync('mkfifo', ['-m', '600', files.stdout, files.stderr], { encoding: 'utf8' });
  if (made.status !== 0) {
    throw new RestoreError(`cannot make the output FIFOs: ${made.stderr || made.error?.message}`);
  }
  const open = (p: string) => openSync(p, constants.O_RDWR | constants.O_NONBLOCK);
  return [
    { fd: open(files.stdout), to: process.stdout },
    { fd: open(files.stderr), to: process.stderr },
  ];
}

/** Forwards whatever the restored process wrote since the last call. */
function forward(output: readonly { fd: number; to: NodeJS.WriteStream }[]): void {
  const buf = Buffer.allocUnsafe(64 * 1024);
  for (const o of output) {
    for (;;) {
      let n = 0;
      try {
        n = readSync(o.fd, buf);
      } catch {
        break; // EAGAIN: nothing more now
      }
      if (n <= 0) break;
      o.to.write(Buffer.from(buf.subarray(0, n)));
    }
  }
}

function timeoutSeconds(): number {
  const v = Number(process.env.LAM_MPI_SSI_crmpi_external_restore_timeout ?? DEFAULT_TIMEOUT_S);
  return Number.isFinite(v) && v > 0 ? v : DEFAULT_TIMEOUT_S;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function readNumber(path: string): number | null {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as number | { pid: number };
    return typeof v === 'number' ? v : v.pid;
  } catch {
    return null;
  }
}

/** Waits for the restored process to join, then to end; its exit code is this runner's. */
async function watch(
  rank: number,
  command: string,
  child: ChildProcess,
  files: RestoreFiles,
  output: { fd: number; to: NodeJS.WriteStream }[],
): Promise<number> {
  const limitMs = timeoutSeconds() * 1000;
  const t0 = performance.now();
  let status: number | null = null;
  child.on('exit', (code, signal) => {
    status = code ?? 128 + (signal ? (osConstants.signals[signal] ?? 0) : 0);
  });
  let pid: number | null = null;
  for (;;) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    forward(output);
    pid ??= readNumber(files.attached);
    const exit = readNumber(files.exit);
    if (exit !== null) {
      forward(output);
      for (const o of output) closeSync(o.fd);
      await new Promise<void>((r) => process.stdout.write('', () => r()));
      return exit;
    }
    if (pid === null && status !== null && status !== 0) {
      throw new RestoreError(
        `rank ${rank}: the restart command exited with status ${status}: ${command}`,
      );
    }
    if (pid === null && performance.now() - t0 > limitMs) {
      throw new RestoreError(
        `rank ${rank}: no restored process joined the new job within ${limitMs / 1000} s ` +
          `(crmpi_external_restore_timeout); the restart command ${status === null ? 'still ran' : `exited with status ${status}`}: ${command}`,
      );
    }
    if (pid !== null && !alive(pid) && readNumber(files.exit) === null) {
      forward(output);
      throw new RestoreError(
        `rank ${rank}: the restored process ${pid} ended without an exit status (killed?)`,
      );
    }
  }
}

/**
 * The job is being ended: the restored process (not in this runner's process group) goes too;
 * the restart command's group goes on exit.
 */
function endAll(files: RestoreFiles, code: number): never {
  const pid = readNumber(files.attached);
  if (pid !== null && alive(pid)) process.kill(pid, 'SIGKILL');
  process.exit(code);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: Error) => {
    const text = err instanceof RestoreError ? err.message : (err.stack ?? String(err));
    process.stderr.write(`restore: ${text}\n`);
    process.exit(1);
  },
);
