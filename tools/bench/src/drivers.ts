import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmdirSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * What the benchmarks that compare drivers share (pingpong, coll): finding tools/bench, loading
 * @ssi/mpi's test launcher, the child processes a run starts (killed on errors and signals, with
 * their process groups), and the Open MPI driver: compiled with mpicc, run with mpirun.
 */

export const OMPI_INSTALL_HINT =
  'install Open MPI (Debian/Ubuntu: apt-get install openmpi-bin libopenmpi-dev, or run ' +
  '.ci/install-system-deps.sh)';

/** `Open MPI` when `mpirun --version` says so: "mpirun (Open MPI) 4.1.4" -> "4.1.4". */
export function openMpiVersion(versionText: string): string | undefined {
  return /\(Open MPI\)\s+(\S+)/.exec(versionText)?.[1];
}

/** tools/bench: the directory with programs/ and c/ (found from dist/ or src/). */
export function benchRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    if (existsSync(join(dir, 'programs')) && existsSync(join(dir, 'c'))) return dir;
    dir = dirname(dir);
  }
  throw new Error('cannot find tools/bench (its programs/ and c/ directories)');
}

export function which(cmd: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, cmd))) return join(dir, cmd);
  }
  return undefined;
}

interface MpiTesting {
  launchJob(o: {
    np: number;
    program: string;
    args?: readonly string[];
    ssi?: Record<string, string | number | boolean>;
    env?: Record<string, string>;
    nodes?: readonly string[];
    bind?: 'core' | 'none';
    timeoutMs?: number;
    label?: string;
  }): Promise<{
    ok: boolean;
    failure?: string;
    output: string;
    stdout: string[];
    bindings?: { cpus?: string; reason: string }[];
  }>;
  killAllJobs(): void;
}

/** `killAllJobs` of @ssi/mpi/testing once loaded: the ranks `launchJob` started. */
let killMpiJobs: (() => void) | undefined;

/** @ssi/mpi's built entry points: tools/bench does not depend on it, the workspace has it. */
function mpiDist(root: string): { index: string; testing: string } {
  for (const pkg of [
    join(root, 'node_modules', '@ssi', 'mpi'),
    join(root, '..', '..', 'packages', 'mpi'),
  ]) {
    const index = join(pkg, 'dist', 'index.js');
    const testing = join(pkg, 'dist', 'testing', 'index.js');
    if (existsSync(index) && existsSync(testing)) return { index, testing };
  }
  throw new Error('@ssi/mpi is not built (packages/mpi/dist): run `pnpm build` in packages/mpi');
}

/** How a column runs `np` ranks of its driver once: resolves with the driver's stdout. */
export type MpiRunner = (np: number, args: string[], timeoutMs: number) => Promise<string>;

/**
 * The @ssi/mpi column: `program` (a file of programs/) started by @ssi/mpi's test launcher with
 * `ssi` for every rank; the program imports @ssi/mpi from SSI_BENCH_MPI_URL.
 */
export async function ssiRunner(
  root: string,
  program: string,
  ssi: Record<string, string | number>,
  env: Record<string, string> = {},
  /** Node addresses: ranks placed in blocks, one node per address (launchJob's `nodes`). */
  nodes?: readonly string[],
  /** launchJob's `bind` (as mpirun's --bind-to; default none). */
  bind?: 'core' | 'none',
  /** launchJob's `bindOversubscribed` (mpirun's lam_bind_oversubscribed; default the launcher's). */
  bindOversubscribed?: number,
): Promise<{ run: MpiRunner; info: Record<string, unknown> }> {
  const dist = mpiDist(root);
  const testing = (await import(pathToFileURL(dist.testing).href)) as MpiTesting;
  killMpiJobs = () => testing.killAllJobs();
  const file = join(root, 'programs', program);
  // What the ranks got, per process count (filled as jobs run; the JSON is written after).
  const bindingSeen = new Set<string>();
  const run: MpiRunner = async (np, args, timeoutMs) => {
    const r = await testing.launchJob({
      np,
      program: file,
      args,
      ssi: { ...ssi },
      env: { SSI_BENCH_MPI_URL: pathToFileURL(dist.index).href, ...env },
      nodes,
      bind,
      ...(bindOversubscribed !== undefined ? { bindOversubscribed } : {}),
      timeoutMs,
      label: `${program} (np ${np})`,
    });
    if (!r.ok) {
      testing.killAllJobs(); // launchJob has killed them already; no rank may outlive the run
      throw new Error(`${r.failure}\n${r.output.split('\n').slice(-30).join('\n')}`);
    }
    if (r.bindings) bindingSeen.add(describeBindings(np, r.bindings));
    return r.stdout[0] ?? '';
  };
  const where = {
    ...(nodes ? { nodes } : {}),
    ...(bind ? { bind } : {}),
    ...(bindOversubscribed !== undefined ? { bindOversubscribed } : {}),
  };
  const info: Record<string, unknown> = { program: file, mpi: dist.index, ssi, ...where };
  if (bind)
    Object.defineProperty(info, 'bindings', { get: () => [...bindingSeen], enumerable: true });
  return { run, info };
}

/** One line per job: `np 2: CPU 0, 1` or `np 4: not bound: oversubscribed (...)`. */
function describeBindings(
  np: number,
  bindings: readonly { cpus?: string; reason: string }[],
): string {
  const cpus = bindings.map((b) => b.cpus);
  if (cpus.every((c) => c !== undefined)) return `np ${np}: CPU ${cpus.join(', ')}`;
  return `np ${np}: ${bindings.find((b) => b.cpus === undefined)?.reason ?? 'not bound'}`;
}

/**
 * Child processes this run started and that may still run, each with whether it leads a process
 * group of its own (mpirun: the kill must reach its ranks).
 */
const children = new Map<ChildProcess, boolean>();

export function track(child: ChildProcess, group = false): ChildProcess {
  children.set(child, group);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Kills every process of the run: @ssi/mpi ranks, children and their groups. */
export function killChildren(): void {
  killMpiJobs?.();
  for (const [c, group] of children) {
    if (c.exitCode !== null || c.signalCode !== null || c.pid === undefined) continue;
    try {
      if (group) process.kill(-c.pid, 'SIGKILL');
      else c.kill('SIGKILL');
    } catch {
      c.kill('SIGKILL');
    }
    if (group) removeOmpiSession(c.pid);
  }
}

/**
 * Runs `body` with a fresh temporary directory (`<tmp>/<prefix>XXXXXX`). Afterwards, and on
 * Ctrl-C or SIGTERM meanwhile, every process of the run is killed and the directory removed; a
 * signal then ends the benchmark with 130, saying it stopped `what`.
 */
export async function withDriverWorkDir<T>(
  prefix: string,
  what: string,
  body: (workDir: string) => Promise<T>,
): Promise<T> {
  const workDir = mkdtempSync(join(tmpdir(), prefix));
  const cleanup = () => {
    killChildren();
    rmSync(workDir, { recursive: true, force: true });
  };
  const onSignal = (sig: NodeJS.Signals) => {
    process.stderr.write(`\n${sig}: stopping ${what}\n`);
    cleanup();
    process.exit(130);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await body(workDir);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    cleanup();
  }
}

/**
 * The session directory a killed mpirun leaves behind (`<tmp>/ompi.<host>.<uid>/pid.<pid>`, as
 * Open MPI 4 names it), and the directory above it when nothing else is left in it.
 */
function removeOmpiSession(pid: number): void {
  const top = join(tmpdir(), `ompi.${hostname()}.${process.getuid?.() ?? 0}`);
  try {
    rmSync(join(top, `pid.${pid}`), { recursive: true, force: true });
    rmdirSync(top); // fails (ignored) while other sessions use it
  } catch {
    // not there, or still in use
  }
}

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a child to its end, collecting its output; kills it (and the rest) after `timeoutMs`. */
export function runChild(
  child: ChildProcess,
  what: string,
  timeoutMs: number,
  group = false,
): Promise<Finished> {
  track(child, group);
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      killChildren();
      reject(new Error(`${what}: no result after ${timeoutMs / 1000} s (killed)\n${stderr}`));
    }, timeoutMs);
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => {
      stdout += d;
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (d: string) => {
      stderr += d;
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${what}: ${err.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/**
 * The Open MPI column: compiles c/<name>.c into `workDir` and runs it with mpirun and the flags
 * `flagsFor(np)`. Returns a reason to skip the column when mpicc or mpirun is missing, is not
 * Open MPI, or cannot compile the driver.
 */
export function ompiRunner(
  root: string,
  name: string,
  workDir: string,
  flagsFor: (np: number) => string[],
  env?: NodeJS.ProcessEnv,
): { run: MpiRunner; info: Record<string, unknown> } | { skip: string } {
  const mpicc = which('mpicc');
  const mpirun = which('mpirun');
  if (!mpicc || !mpirun)
    return { skip: `${!mpicc ? 'mpicc' : 'mpirun'} not found on PATH; ${OMPI_INSTALL_HINT}` };
  const v = spawnSync(mpirun, ['--version'], { encoding: 'utf8', timeout: 20_000 });
  const version = openMpiVersion(`${v.stdout ?? ''}${v.stderr ?? ''}`);
  if (!version)
    return {
      skip: `${mpirun} is not Open MPI ("${(v.stdout ?? '').split('\n')[0]}"); ${OMPI_INSTALL_HINT}`,
    };
  const source = join(root, 'c', `${name}.c`);
  const binary = join(workDir, name);
  const cc = spawnSync(mpicc, ['-O2', '-o', binary, source], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (cc.status !== 0)
    return {
      skip: `mpicc could not compile ${source} (${(cc.stderr || cc.error?.message || '').trim()}); ${OMPI_INSTALL_HINT}`,
    };
  const run: MpiRunner = async (np, args, timeoutMs) => {
    const flags = flagsFor(np);
    const child = spawn(mpirun, [...flags, binary, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
      detached: true, // a process group of its own, so that a kill reaches the ranks
    });
    const r = await runChild(child, `Open MPI ${name} (np ${np})`, timeoutMs, true);
    if (r.code !== 0)
      throw new Error(
        `mpirun ${flags.join(' ')} ... exited with ${r.code ?? r.signal}\n${r.stderr}`,
      );
    return r.stdout;
  };
  return {
    run,
    info: { version, mpirun, binary, compile: `${mpicc} -O2 -o ${binary} ${source}` },
  };
}

/**
 * The commit of the code measured, and which of `paths` (the measured packages) have changes not
 * committed (read-only git, no optional locks; undefined outside a git checkout).
 */
export function sourceState(
  root: string,
  paths: readonly string[],
): Record<string, unknown> | undefined {
  const git = (args: string[]) =>
    spawnSync('git', ['--no-optional-locks', '-C', join(root, '..', '..'), ...args], {
      encoding: 'utf8',
      timeout: 10_000,
    });
  const head = git(['rev-parse', 'HEAD']);
  if (head.status !== 0) return undefined;
  const dirty = git(['status', '--porcelain', '--', ...paths]);
  return { commit: head.stdout.trim(), uncommitted: dirty.stdout.split('\n').filter(Boolean) };
}
