import { existsSync, statSync } from 'node:fs';
import { isNodeSpec, type NodeSpecItem, parseNodeSpecWord } from '@ssi/lam';
import { UsageError } from '../run-command';

export const USAGE = `usage: mpirun [options] [N | C | n0-3,5 | c0-7]... program [args...]
       mpirun [options] appschema
Runs an MPI program on the universe (lamboot; with no universe running, a private one-node
universe is booted for the job and halted afterwards). .js/.mjs/.cjs programs run with this
Node, .ts/.mts/.cts programs directly through tsx, anything else as a command.
  -np N, -c N      N copies (default: one per CPU of the named nodes, or C); with a node list,
                   placed round-robin over it
  --ssi name value an SSI parameter for mpirun and every rank (e.g. --ssi rpi tcp)
  -x VAR[,VAR...]  export these variables of mpirun's environment (VAR=value: set it) to the ranks
  -wd dir          working directory of the ranks (default: this directory)
  -nw              do not wait: start the job and exit (rank 0 takes mpirun's part)
  --no-prefix      forward output as is, without the [rank] prefix on every line
  --bind-to core|none  bind each rank to a core of its own where its node has enough free
                   cores (default core; oversubscribed: consecutive ranks in blocks, one block
                   per CPU, up to --ssi lam_bind_oversubscribed N (4) a CPU), or never
                   (--ssi lam_bind_to)
  -v               say what is started where (and bound to which CPU)
An application schema has one line per program: [nodes] [-np N] [-x ...] [-wd dir] program [args]
(# starts a comment).
Checkpoint/restart: --ssi cr self --ssi rpi crtcp makes the job checkpointable (the program saves
its state with mpi.cr.onCheckpoint; see @ssi/cr-self). lamcheckpoint <mpirun pid | job id> takes a
checkpoint; lamrestart <checkpoint dir> restarts from the latest complete one. --ssi
crlam_base_recover N: a job that loses a rank or a node restarts by itself from its latest
complete checkpoint, up to N times (spare nodes: --ssi crlam_base_recover_nodes n4,5).
SIGTERM to a checkpointable mpirun (or lamcheckpoint --preempt) is a drain notice: the ranks see
mpi.cr.draining, a checkpoint is taken, mpirun exits 75 printing the lamrestart command.`;

/** One program of a job: what to run, how many copies, where. */
export interface JobPart {
  np?: number;
  where: NodeSpecItem[];
  exports: string[];
  wd?: string;
  argv: string[];
}

export interface MpirunArgs {
  parts: JobPart[];
  noWait: boolean;
  prefix: boolean;
  verbose: boolean;
  /** The application schema the parts came from, if any. */
  schemaFile?: string;
}

const PROGRAM_EXTENSIONS = /\.(c|m)?(j|t)s$/;

/** Options that take a value: the value is not the program. */
const VALUE_OPTIONS = new Set(['-np', '-c', '-x', '-wd', '--ssi', '-ssi', '--bind-to']);

/**
 * `--bind-to <policy>` before the program is `--ssi lam_bind_to <policy>` (one place decides:
 * the parameter, whatever set it); the value is checked with the other settings.
 */
export function bindToAsSsi(argv: readonly string[]): string[] {
  const out = [...argv];
  const end = programStart(argv);
  for (let i = 0; i < end; i++) {
    if (out[i] === '--ssi' || out[i] === '-ssi') i += 2;
    else if (out[i] === '--bind-to') {
      if (i + 1 >= end) throw new UsageError('--bind-to needs a policy: core or none');
      out.splice(i, 2, '--ssi', 'lam_bind_to', out[i + 1]!);
      return bindToAsSsi(out);
    } else if (VALUE_OPTIONS.has(out[i]!)) i++;
  }
  return out;
}

/** Index in argv where the program (or the app schema) starts. */
export function programStart(argv: readonly string[]): number {
  let i = 0;
  while (i < argv.length) {
    const a = argv[i]!;
    if (a === '--ssi' || a === '-ssi') i += 3;
    else if (VALUE_OPTIONS.has(a)) i += 2;
    else if (a === '--') return i + 1;
    else if (a.startsWith('-') || isNodeSpec(a)) i++;
    else break;
  }
  return Math.min(i, argv.length);
}

function count(value: string | undefined, option: string): number {
  const n = Number(value);
  if (value === undefined || !Number.isInteger(n) || n < 1) {
    throw new UsageError(
      `${option} needs a positive number of processes, got ${value ?? 'nothing'}`,
    );
  }
  return n;
}

/** Parses options, node words and the program of one part (`words` after --ssi removal). */
export function parsePart(
  words: readonly string[],
  where = 'the command line',
): JobPart & {
  flags: string[];
} {
  const part: JobPart & { flags: string[] } = { where: [], exports: [], argv: [], flags: [] };
  let i = 0;
  for (; i < words.length; i++) {
    const a = words[i]!;
    if (a === '-np' || a === '-c') part.np = count(words[++i], `${a} (${where})`);
    else if (a === '-x') {
      const v = words[++i];
      if (!v) throw new UsageError(`-x needs a variable name (${where})`);
      part.exports.push(...v.split(',').filter(Boolean));
    } else if (a === '-wd') {
      const v = words[++i];
      if (!v) throw new UsageError(`-wd needs a directory (${where})`);
      part.wd = v;
    } else if (a === '--') {
      i++;
      break;
    } else if (isNodeSpec(a)) part.where.push(parseNodeSpecWord(a));
    else if (a.startsWith('-')) part.flags.push(a);
    else break;
  }
  part.argv = words.slice(i);
  for (const name of part.exports) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*(=.*)?$/.test(name)) {
      throw new UsageError(`-x ${name}: not an environment variable name (${where})`);
    }
  }
  return part;
}

/** Is this lone argument an application schema rather than a program? */
function looksLikeAppSchema(path: string): boolean {
  if (PROGRAM_EXTENSIONS.test(path) || !existsSync(path)) return false;
  const st = statSync(path);
  return st.isFile() && (st.mode & 0o111) === 0;
}

export function parseMpirunArgs(rest: readonly string[]): MpirunArgs & { flags: string[] } {
  const part = parsePart(rest);
  const out = {
    parts: [part as JobPart],
    noWait: part.flags.includes('-nw'),
    prefix: !part.flags.includes('--no-prefix'),
    verbose: part.flags.includes('-v'),
    flags: part.flags,
  };
  for (const f of part.flags) {
    if (f === '-h' || f === '--help') throw new UsageError(USAGE, 0);
    if (!['-nw', '--no-prefix', '-v'].includes(f)) {
      throw new UsageError(`unknown option ${f}\n${USAGE}`);
    }
  }
  if (part.argv.length === 0) throw new UsageError(`which program?\n${USAGE}`);
  if (part.argv.length === 1 && part.np === undefined && part.where.length === 0) {
    if (looksLikeAppSchema(part.argv[0]!)) return { ...out, schemaFile: part.argv[0] };
  }
  return out;
}
