import { createCliContext, reportProblems } from '../cli-context';
import { readAppSchema } from '../mpirun/app-schema';
import { parseMpirunArgs, programStart } from '../mpirun/args';
import { runJob } from '../mpirun/job';
import { placeJob } from '../mpirun/placement';
import { commandFor } from '../mpirun/program-command';
import { openUniverse } from '../mpirun/universe';

export async function main(argv: string[]): Promise<number> {
  const ctx = createCliContext(argv, programStart(argv));
  const args = parseMpirunArgs(ctx.rest);
  reportProblems(ctx);
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const parts = args.schemaFile ? readAppSchema(args.schemaFile) : args.parts;
  for (const part of parts) commandFor(part.argv, process.cwd()); // a missing program fails here
  const universe = await openUniverse(ctx, say, {
    verbose: args.verbose,
    // A private universe ends with mpirun, and so would a job that outlives it.
    embeddedRefusal: args.noWait ? '-nw needs a running universe: run lamboot first' : undefined,
  });
  try {
    const placements = placeJob(parts, await universe.client.universe());
    return await runJob(universe.client, placements, {
      ssiEnv: ctx.params.toEnvironment(),
      noWait: args.noWait,
      prefix: args.prefix,
      verbose: args.verbose,
      say,
    });
  } finally {
    await universe.release();
  }
}
