import { bindPolicy, oversubscribedBinding } from '@ssi/lam';
import { deferredCaCertsEnv, discoveryHandoverEnv, type JobRecord } from '@ssi/mpi';
import { createCliContext, reportProblems } from '../cli-context';
import { readAppSchema } from '../mpirun/app-schema';
import {
  bindToAsSsi,
  type JobPart,
  parseMpirunArgs,
  parsePart,
  programStart,
  USAGE,
} from '../mpirun/args';
import { forwardedEnv } from '../mpirun/forwarded-env';
import { newJobId } from '../mpirun/job';
import { type Placement, placeJob } from '../mpirun/placement';
import { commandFor, compileTsPrograms, setRankNodeArgs } from '../mpirun/program-command';
import { rankSearchFrom } from '../mpirun/rank-search';
import { runRecoverable } from '../mpirun/recovery';
import { inheritedSsiArgs, type RestartJob, readRestart, restartParts } from '../mpirun/restart';
import { startupSnapshotArgs } from '../mpirun/startup-snapshot';
import { openUniverse } from '../mpirun/universe';
import { UsageError } from '../run-command';
import { checkSettings } from '../settings-check';

/** `mpirun --cr-restart <series dir> [options]`: what lamrestart hands over. */
const CR_RESTART = '--cr-restart';

export async function main(argv: string[]): Promise<number> {
  argv = bindToAsSsi(argv);
  let restart: RestartJob | undefined;
  if (argv[0] === CR_RESTART) {
    if (!argv[1]) throw new UsageError(`${CR_RESTART} needs a series directory`);
    restart = await readRestart(argv[1]);
    process.chdir(restart.record.cwd); // the programs and their paths are the checkpointed job's
    argv = [...inheritedSsiArgs(restart.record, argv.slice(2)), ...argv.slice(2)];
  }
  const ctx = createCliContext(argv, restart ? argv.length : programStart(argv));
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const { parts, noWait, prefix, verbose } = restart
    ? restartArgs(ctx.rest, restart)
    : jobArgs(ctx.rest);
  reportProblems(ctx);
  await checkSettings(ctx, (line) => say(`mpirun: ${line}`)); // typos and bad values: once, first
  const bindTo = bindPolicy(ctx.params);
  const bindOversubscribed = oversubscribedBinding(ctx.params);
  for (const part of parts) commandFor(part.argv, process.cwd()); // a missing program fails here
  const tsNotes = await compileTsPrograms(
    parts.map((p) => p.argv),
    process.cwd(),
  );
  if (verbose) for (const note of tsNotes) say(note);
  const universe = await openUniverse(ctx, say, {
    verbose,
    // A private universe ends with mpirun, and so would a job that outlives it.
    embeddedRefusal: noWait ? '-nw needs a running universe: run lamboot first' : undefined,
  });
  // The ranks of a private universe have mpirun's environment, so the NODE_OPTIONS (V8 flags)
  // the snapshot is built with: a snapshot of other flags would not start.
  const exportsNodeOptions = parts.some((p) => p.exports.some((x) => /^NODE_OPTIONS(=|$)/.test(x)));
  if (universe.embedded && !exportsNodeOptions) {
    setRankNodeArgs(startupSnapshotArgs(ctx, (line) => say(`mpirun: ${line}`)));
  }
  try {
    const placements = placeJob(parts, await universe.client.universe());
    if (restart && placements.length !== restart.manifest.size) {
      throw new UsageError(
        `the checkpoint is of ${restart.manifest.size} process(es) but the restart places ${placements.length}`,
        1,
      );
    }
    const ssiEnv = ctx.params.toEnvironment();
    return await runRecoverable({
      ctx,
      client: universe.client,
      placements,
      jobId: newJobId(universe.client),
      record: recordOf(placements, ssiEnv),
      job: { ssiEnv, noWait, prefix, verbose, say, bindTo, bindOversubscribed },
      // Module discovery once per job: the ranks read only the module packages mpirun found.
      rankEnv: {
        ...forwardedEnv(ctx.params),
        ...discoveryHandoverEnv(rankSearchFrom(parts)),
        ...deferredCaCertsEnv(
          ctx.params,
          parts.flatMap((p) => p.exports),
        ),
      },
      restart: restart && {
        seriesDir: restart.seriesDir,
        series: restart.manifest.series,
        createdAt: restart.manifest.createdAt,
      },
    });
  } finally {
    await universe.release();
  }
}

function jobArgs(rest: readonly string[]) {
  const args = parseMpirunArgs(rest);
  const parts = args.schemaFile ? readAppSchema(args.schemaFile) : args.parts;
  return { ...args, parts };
}

/** A restart's command line: nodes to move to, and mpirun's flags; the programs are recorded. */
function restartArgs(rest: readonly string[], restart: RestartJob) {
  const part = parsePart(rest, 'the restart command line');
  if (part.argv.length > 0 || part.np !== undefined) {
    throw new UsageError(
      `a restart runs the checkpointed programs with their process counts; give only nodes and options (got ${[...part.argv].join(' ') || `-np ${part.np}`})\n${USAGE}`,
    );
  }
  for (const f of part.flags) {
    if (!['--no-prefix', '-v'].includes(f))
      throw new UsageError(`${f} cannot be used with a restart`);
  }
  return {
    parts: restartParts(restart.record, part.where),
    noWait: false,
    prefix: !part.flags.includes('--no-prefix'),
    verbose: part.flags.includes('-v'),
  };
}

/** What a series manifest records of the job: enough to start it again elsewhere. */
function recordOf(placements: readonly Placement[], ssiEnv: Record<string, string>): JobRecord {
  const parts = [...new Set(placements.map((p) => p.part))].map(
    (part): JobPart => ({ ...part, np: placements.filter((p) => p.part === part).length }),
  );
  return { parts, ssiEnv, size: placements.length, cwd: process.cwd() };
}
